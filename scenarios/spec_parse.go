package scenarios

import (
	"bytes"
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"slices"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// MaxSpecBytes bounds a spec, checked before it is read or parsed: parsing
// allocates about a hundred times a spec's size, so an 80 MB spec held
// 5.4 GB for 41 s before it was refused. The built-in suites are 2 KiB as
// JSON; a spec at every count limit below (64 configurations, 1,000
// outages, 10,000 link changes, every field written out) is about 600 KiB
// and parses in 0.2 s; 1 MiB leaves room for comments.
const MaxSpecBytes = 1 << 20

// The most entries of each kind a spec may have, checked before any entry
// is: past them, a spec is refused with one error per count rather than
// one per entry.
const (
	// MaxConfigs bounds the configurations: each runs on a lab of its own
	// (WireGuard peers, a shaped link, a health server and a prober), all
	// side by side in one process; the built-in suites' seven keep a
	// 2-core machine well below saturation, and 64 is nine times that.
	MaxConfigs = 64
	// MaxOutages bounds link.outages: an outage every 10 minutes for the
	// longest run (MaxDuration); each is applied to every lab and reported
	// for every configuration.
	MaxOutages = 1_000
	// MaxLinkChanges bounds link.changes: a change a minute for the
	// longest run.
	MaxLinkChanges = 10_000
)

// MaxDuration bounds a spec's duration, and a whole `tunnelprobe scenario`
// command (every pass of --repeat): a week. A run holds its timelines in
// memory until it ends, and a longer one would more likely be cut short
// by the machine than measure anything a week does not.
const MaxDuration = 7 * 24 * time.Hour

// MaxSpecErrors is how many errors Validate lists; it counts the rest.
const MaxSpecErrors = 10

// MaxLoadConns bounds load.conns times the configurations, whose loads run
// side by side: the default suite's 2,000 connections for each of 4 peaked
// at 1.8 GiB in one process, so 40,000 would take some 9 GiB of the 24 GiB
// machine, and the container suite would need more descriptors than its
// SOCKS5 ingresses may open.
const MaxLoadConns = 40_000

// ReadSpec reads the spec in file, YAML or JSON, as Parse does; an error
// names the file. A file over MaxSpecBytes is refused before it is read.
func ReadSpec(file string) (Spec, error) {
	f, err := os.Open(file)
	if err != nil {
		return Spec{}, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() && st.Size() > MaxSpecBytes {
		return Spec{}, fmt.Errorf("%s: %d bytes, more than the %d (1 MiB) a spec may hold", file, st.Size(), MaxSpecBytes)
	}
	// A pipe has no size to check: read one byte past the limit at most.
	data, err := io.ReadAll(io.LimitReader(f, MaxSpecBytes+1))
	if err != nil {
		return Spec{}, err
	}
	spec, err := Parse(data)
	if err != nil {
		return Spec{}, fmt.Errorf("%s: %w", file, err)
	}
	return spec, nil
}

// Parse reads a spec from YAML or JSON. Unknown fields are errors, and so is
// every value a field's type refuses or Validate finds out of range; errors
// name the field, at most MaxSpecErrors of them. A spec over MaxSpecBytes
// is refused unparsed.
func Parse(data []byte) (Spec, error) {
	if len(data) > MaxSpecBytes {
		return Spec{}, fmt.Errorf("spec: more than the %d bytes (1 MiB) a spec may hold", MaxSpecBytes)
	}
	js, err := yamlToJSON(data)
	if err != nil {
		return Spec{}, fmt.Errorf("spec: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	var s Spec
	if err := dec.Decode(&s); err != nil {
		return Spec{}, decodeError(js, err)
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return Spec{}, errors.New("spec: more than one document")
	}
	missing := missingFields(js, s)
	if err := s.Validate(); err != nil || len(missing) > 0 {
		return Spec{}, errors.Join(missing.join(), err)
	}
	return s, nil
}

// missingFields names what a written spec must say although its zero value
// would mean something: the link's rate and queue (a forgotten rate would
// run an unlimited link), each configuration's mode unless it has a preset,
// and a stream that is not a positive rate ("unlimited" streams nothing).
// A spec built in Go takes the zero values as they are.
func missingFields(js []byte, s Spec) specErrors {
	var written struct {
		Link map[string]json.RawMessage `json:"link"`
		Load struct {
			Stream json.RawMessage `json:"stream"`
		} `json:"load"`
		Configs []struct {
			Health map[string]json.RawMessage `json:"health"`
		} `json:"configs"`
	}
	var errs specErrors
	if json.Unmarshal(js, &written) != nil {
		return nil // decoded already: the shapes match
	}
	given := func(obj map[string]json.RawMessage, key string) bool {
		v, ok := jsonKey(obj, key)
		return ok && string(v) != "null" // YAML's "key:" with no value
	}
	for _, key := range []string{"rate", "queue"} {
		if !given(written.Link, key) {
			errs.bad("link."+key, "required")
		}
	}
	if stream := written.Load.Stream; stream != nil && string(stream) != "null" && s.Load.Stream <= 0 {
		errs.bad("load.stream", "%s is not a positive rate", stream)
	}
	for i, c := range written.Configs {
		if !given(c.Health, "mode") && (i >= len(s.Configs) || s.Configs[i].Health.Preset == "") {
			errs.bad(fmt.Sprintf("configs[%d].health.mode", i), "required: loop, probe or auto")
		}
	}
	return errs
}

// yamlToJSON returns the one YAML document in data (JSON is YAML too) as
// JSON, for encoding/json to decode with the spec's json tags: its errors
// name the YAML's line, a key given twice among them. A second document is
// refused rather than dropped without a word.
func yamlToJSON(data []byte) ([]byte, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var node yaml.Node
	if err := dec.Decode(&node); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	yaml11Bools(&node)
	var doc any
	if err := node.Decode(&doc); err != nil {
		return nil, err
	}
	n := 1
	for {
		var more yaml.Node
		err := dec.Decode(&more)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		n++
	}
	if n > 1 {
		return nil, fmt.Errorf("%d YAML documents, want one", n)
	}
	return json.Marshal(jsonValue(doc))
}

// yaml11Bools reads the plain (unquoted) scalars yes, no, on and off, in
// any of YAML 1.1's three cases, as booleans, as Kubernetes' YAML and
// every spec written for it do (heal: yes); YAML 1.2, which the decoder
// follows, reads them as text, which a boolean field would refuse. Quoted,
// they stay text. Aliases are not followed: their anchors are walked
// where they stand.
func yaml11Bools(n *yaml.Node) {
	if n.Kind == yaml.ScalarNode && n.Style == 0 && n.Tag == "!!str" {
		switch n.Value {
		case "yes", "Yes", "YES", "on", "On", "ON":
			n.Tag, n.Value = "!!bool", "true"
		case "no", "No", "NO", "off", "Off", "OFF":
			n.Tag, n.Value = "!!bool", "false"
		}
	}
	for _, c := range n.Content {
		yaml11Bools(c)
	}
}

// jsonValue returns v, as the YAML decoder made it, in the shapes JSON
// has: a mapping whose keys are not all strings (1: x) with its keys as
// text, which the spec's fields then refuse by name; a timestamp (a YAML
// 1.1 date such as 2001-12-14, decoded as a time) as the text it was.
func jsonValue(v any) any {
	switch v := v.(type) {
	case map[any]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[fmt.Sprint(k)] = jsonValue(e)
		}
		return m
	case map[string]any:
		for k, e := range v {
			v[k] = jsonValue(e)
		}
	case []any:
		for i, e := range v {
			v[i] = jsonValue(e)
		}
	case time.Time:
		if v.Equal(v.Truncate(24 * time.Hour)) {
			return v.Format(time.DateOnly)
		}
		return v.Format(time.RFC3339Nano)
	}
	return v
}

// decodeError explains why js, a spec, did not decode (err): counts over
// their limits alone, as Validate reports them, before any entry is looked
// at; else every value its type refuses, under its path; else err.
func decodeError(js []byte, err error) error {
	var counts struct {
		Link struct {
			Changes []json.RawMessage `json:"changes"`
			Outages []json.RawMessage `json:"outages"`
		} `json:"link"`
		Configs []json.RawMessage `json:"configs"`
	}
	if json.Unmarshal(js, &counts) == nil {
		if errs := countErrors(len(counts.Configs), len(counts.Link.Outages), len(counts.Link.Changes)); len(errs) > 0 {
			return errs.join()
		}
	}
	if errs := decodeErrors(js); len(errs) > 0 {
		return errs.join()
	}
	return fmt.Errorf("spec: %w", err)
}

// decodeErrors names the fields of the spec in js that do not decode, each
// by its path as Validate names it ("link.rate", "configs[2].health.mode"):
// encoding/json stops at the first value its type refuses and, for a text
// type such as a rate or a mode, does not say which field held it. It is
// called once decoding has failed, so its cost does not matter.
func decodeErrors(js []byte) specErrors {
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.UseNumber() // numbers re-encode as written
	var tree any
	if dec.Decode(&tree) != nil {
		return nil
	}
	var errs specErrors
	decodeField(reflect.TypeFor[Spec](), tree, "", &errs)
	return errs
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// decodeField decodes v, a value of the generic JSON tree, into a new t,
// descending into structs and slices, so that each value that fails is
// reported under its own path; a null leaves a field as it is, as
// encoding/json does.
func decodeField(t reflect.Type, v any, path string, errs *specErrors) {
	if v == nil {
		return
	}
	pt := reflect.PointerTo(t)
	if !pt.Implements(jsonUnmarshaler) && !pt.Implements(textUnmarshaler) {
		obj, _ := v.(map[string]any)
		list, _ := v.([]any)
		switch {
		case t.Kind() == reflect.Pointer:
			decodeField(t.Elem(), v, path, errs)
			return
		case t.Kind() == reflect.Struct && obj != nil:
			known := map[string]bool{}
			for i := range t.NumField() {
				f := t.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				if f.Anonymous && name == "" {
					known = nil // promoted fields: not worth naming here
				}
				if !f.IsExported() || name == "" || name == "-" {
					continue
				}
				if known != nil {
					known[name] = true
				}
				if val, ok := jsonKey(obj, name); ok {
					decodeField(f.Type, val, strings.TrimPrefix(path+"."+name, "."), errs)
				}
			}
			unknownFields(obj, known, path, errs)
			return
		case t.Kind() == reflect.Slice && list != nil:
			for i, e := range list {
				decodeField(t.Elem(), e, fmt.Sprintf("%s[%d]", path, i), errs)
			}
			return
		}
	}
	b, _ := json.Marshal(v)
	if err := json.Unmarshal(b, reflect.New(t).Interface()); err != nil {
		errs.bad(path, "%v", err)
	}
}

// unknownFields names each key of obj, an object at path, that is none of
// the known fields (nil: not checked), and the fields it may hold:
// encoding/json says only 'json: unknown field "x"', not where.
func unknownFields(obj map[string]any, known map[string]bool, path string, errs *specErrors) {
	if known == nil {
		return
	}
	for _, key := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := jsonKey(known, key); !ok {
			errs.bad(path, "unknown field %q (%s holds %s)", key, cmp.Or(path, "a spec"), strings.Join(slices.Sorted(maps.Keys(known)), ", "))
		}
	}
}

// jsonKey looks name up in obj as encoding/json matches keys to fields:
// exactly, or else without regard to case.
func jsonKey[V any](obj map[string]V, name string) (V, bool) {
	if v, ok := obj[name]; ok {
		return v, true
	}
	for k, v := range obj {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	var none V
	return none, false
}
