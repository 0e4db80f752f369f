package jsonsize

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// An Estimate is the memory that decoding a document takes at least.
type Estimate struct {
	// Bytes counts, by their Go size, every element of a slice, entry of
	// a map and target of a pointer that decoding allocates, and the bytes
	// of every string.
	Bytes int64
	// Largest is the array (or object, of a map) whose elements take the
	// most of Bytes.
	Largest Part
}

// A Part is one array of a document, or one object decoded into a map.
type Part struct {
	// Path names it as JSON does: runs[3].report.configs.
	Path string
	// Count is its elements, Text the bytes of its JSON text and Bytes
	// the memory its elements take, strings and pointers inside them left
	// to their own count.
	Count, Text int
	Bytes       int64
}

// MaxDepth is as deep as Of follows a document: encoding/json refuses one
// nested deeper than 10,000 anyway.
const MaxDepth = 10_000

// Of estimates the memory that json.Unmarshal takes to decode data into a
// value of type t. Fields are matched as encoding/json matches them (by
// tag or name, case-insensitively); what decodes into no field, or into a
// type of its own decoding (json.Unmarshaler, encoding.TextUnmarshaler),
// counts by its text at most. A document that is not JSON is refused with
// encoding/json's error.
func Of(data []byte, t reflect.Type) (Estimate, error) { return OfLimited(data, t, nil) }

// ErrTooMany is what OfLimited refuses an array past its limit with.
var ErrTooMany = errors.New("more than its kind of file holds")

// OfLimited is Of, refusing as well an array (or map) with more entries
// than limits allows it: a key is a path of fields without indices or map
// keys (levels.histograms.connect.Counts; * for a map's key), matched
// whatever case the document writes its keys in.
func OfLimited(data []byte, t reflect.Type, limits map[string]int) (Estimate, error) {
	if !json.Valid(data) {
		// Unmarshal refuses it when it checks the syntax, before it
		// decodes anything, and says where.
		var raw json.RawMessage
		if err := json.Unmarshal(data, &raw); err != nil {
			return Estimate{}, err
		}
		return Estimate{}, errors.New("jsonsize: not JSON")
	}
	w := walker{data: data, fields: map[reflect.Type]*fieldSet{}, own: map[reflect.Type]bool{}, limits: limits}
	if err := w.value(t, 0); err != nil {
		return Estimate{}, err
	}
	return w.est, nil
}

// ErrTooDense is what Bound refuses a document with that is JSON but would
// take too much memory decoded.
var ErrTooDense = errors.New("more memory decoded than its size allows")

// Bound refuses data, a JSON document, if decoding it into a value of type
// t would take more than perByte times its size and slack (see Of): the
// error names the array that takes the most, as "runs: 300000 entries in
// 17000000 bytes would take ..."; or if an array has more entries than
// limits allows (see OfLimited). What is not JSON is refused too.
func Bound(data []byte, t reflect.Type, perByte, slack int64, limits map[string]int) error {
	est, err := OfLimited(data, t, limits)
	if err != nil {
		return err
	}
	if most := perByte*int64(len(data)) + slack; est.Bytes > most {
		p := est.Largest
		if p.Path == "" {
			p.Path = "the document"
		}
		return fmt.Errorf("%s: %d entries in %d bytes would take %d bytes of memory, and the whole %d bytes at least %d: %w (%d)",
			p.Path, p.Count, p.Text, p.Bytes, len(data), est.Bytes, ErrTooDense, most)
	}
	return nil
}

// walker walks a document, valid JSON, from pos on.
type walker struct {
	data   []byte
	pos    int
	est    Estimate
	path   []step
	fields map[reflect.Type]*fieldSet
	own    map[reflect.Type]bool // see decodesItself
	limits map[string]int        // see OfLimited
}

// A step is one level of the path: a key, or an index when key is nil.
// field is the name of the struct field the key decodes into ("" for a
// map's key or a key of no field): a path of fields names an array
// whatever case its keys are written in.
type step struct {
	key   []byte
	index int
	field string
}

var (
	unmarshaler     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	anySlice        = reflect.TypeFor[[]any]()
	anyMap          = reflect.TypeFor[map[string]any]()
)

// decodesItself reports whether t has a decoding of its own (UnmarshalJSON
// or UnmarshalText), found once per type.
func (w *walker) decodesItself(t reflect.Type) bool {
	own, ok := w.own[t]
	if !ok {
		pt := reflect.PointerTo(t)
		own = t.Kind() != reflect.Pointer && (pt.Implements(unmarshaler) || pt.Implements(textUnmarshaler))
		w.own[t] = own
	}
	return own
}

// value walks the value at pos, decoded into a t (nil: into nothing).
func (w *walker) value(t reflect.Type, depth int) error {
	if depth > MaxDepth {
		return fmt.Errorf("jsonsize: nested deeper than %d", MaxDepth)
	}
	w.space()
	start := w.pos
	switch {
	case t == nil || w.data[w.pos] == 'n': // null allocates nothing
		w.skip()
		return nil
	case w.decodesItself(t):
		w.skip()
		w.est.Bytes += int64(w.pos - start)
		return nil
	}
	c := w.data[w.pos]
	switch t.Kind() {
	case reflect.Pointer:
		w.est.Bytes += int64(t.Elem().Size())
		return w.value(t.Elem(), depth+1)
	case reflect.Interface:
		switch c {
		case '[':
			return w.array(anySlice, depth)
		case '{':
			return w.object(anyMap, depth)
		}
	case reflect.Struct:
		if c == '{' {
			return w.object(t, depth)
		}
	case reflect.Map:
		if c == '{' {
			return w.object(t, depth)
		}
	case reflect.Slice, reflect.Array:
		if c == '[' {
			return w.array(t, depth)
		}
	}
	w.skip()
	base64 := t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
	if c == '"' && (t.Kind() == reflect.String || base64 || t.Kind() == reflect.Interface) {
		w.est.Bytes += int64(w.pos - start) // a string, or []byte in base64
	}
	return nil
}

// array walks the array at pos into t, a slice or an array.
func (w *walker) array(t reflect.Type, depth int) error {
	start := w.pos
	w.pos++ // [
	n := 0
	for {
		w.space()
		if w.data[w.pos] == ']' {
			w.pos++
			break
		}
		w.path = append(w.path, step{index: n})
		err := w.value(t.Elem(), depth+1)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
		n++
		w.comma()
	}
	if t.Kind() == reflect.Slice {
		return w.part(n, w.pos-start, int64(n)*int64(t.Elem().Size()))
	}
	return nil
}

// object walks the object at pos into t: a struct, or a map.
func (w *walker) object(t reflect.Type, depth int) error {
	start := w.pos
	w.pos++ // {
	var fs *fieldSet
	if t.Kind() == reflect.Struct {
		fs = w.fieldsOf(t)
	}
	var embedded uint64 // the embedded pointers allocated so far
	n, keys := 0, 0
	for {
		w.space()
		if w.data[w.pos] == '}' {
			w.pos++
			break
		}
		key, err := w.key()
		if err != nil {
			return err
		}
		var elem reflect.Type
		name := ""
		if fs == nil {
			elem = t.Elem()
			keys += len(key)
		} else if f, ok := fs.lookup(key); ok {
			elem, name = f.typ, f.name
			if f.via >= 0 && embedded&(1<<f.via) == 0 {
				embedded |= 1 << f.via
				w.est.Bytes += int64(fs.embedded[f.via].Size())
			}
		}
		w.path = append(w.path, step{key: key, field: name})
		err = w.value(elem, depth+1)
		w.path = w.path[:len(w.path)-1]
		if err != nil {
			return err
		}
		n++
		w.comma()
	}
	if fs == nil {
		return w.part(n, w.pos-start, int64(n)*int64(t.Key().Size()+t.Elem().Size())+int64(keys))
	}
	return nil
}

// part counts an array or map's elements, keeps the largest, and refuses
// one past its limit (see OfLimited).
func (w *walker) part(n, text int, size int64) error {
	w.est.Bytes += size
	if size > w.est.Largest.Bytes {
		w.est.Largest = Part{Path: w.pathString(), Count: n, Text: text, Bytes: size}
	}
	if w.limits != nil {
		if most, ok := w.limits[w.fieldPath()]; ok && n > most {
			return fmt.Errorf("%s: %d entries, %w: at most %d", w.pathString(), n, ErrTooMany, most)
		}
	}
	return nil
}

// fieldPath is the path of fields to the value at hand, indices and map
// keys left out: levels.histograms.connect.Counts.
func (w *walker) fieldPath() string {
	var b strings.Builder
	for _, s := range w.path {
		switch {
		case s.key == nil:
			continue
		case b.Len() > 0:
			b.WriteByte('.')
		}
		if s.field == "" {
			b.WriteByte('*')
		} else {
			b.WriteString(s.field)
		}
	}
	return b.String()
}

func (w *walker) pathString() string {
	var b strings.Builder
	for _, s := range w.path {
		switch {
		case s.key == nil:
			fmt.Fprintf(&b, "[%d]", s.index)
		case b.Len() > 0:
			b.WriteString("." + string(s.key))
		default:
			b.Write(s.key)
		}
	}
	return b.String()
}

// key reads an object's key and the colon after it, as a slice of the
// document unless it holds an escape: a key costs no allocation.
func (w *walker) key() ([]byte, error) {
	start := w.pos
	w.skip()
	raw := w.data[start:w.pos]
	key := raw[1 : len(raw)-1]
	if bytes.IndexByte(key, '\\') >= 0 {
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return nil, err
		}
		key = []byte(s)
	}
	w.space()
	w.pos++ // :
	return key, nil
}

// space skips white space.
func (w *walker) space() {
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case ' ', '\t', '\n', '\r':
			w.pos++
		default:
			return
		}
	}
}

// comma skips the comma after an element, if there is one.
func (w *walker) comma() {
	w.space()
	if w.data[w.pos] == ',' {
		w.pos++
	}
}

// skip passes over the value at pos: the document is valid JSON, so
// counting brackets outside strings finds its end.
func (w *walker) skip() {
	depth := 0
	for w.pos < len(w.data) {
		switch c := w.data[w.pos]; {
		case c == '"':
			w.skipString()
			if depth == 0 {
				return
			}
		case c == '[' || c == '{':
			depth++
			w.pos++
		case c == ']' || c == '}':
			if depth == 0 {
				return // the end of the array or object around a literal
			}
			depth--
			w.pos++
			if depth == 0 {
				return
			}
		case depth == 0 && (c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r'):
			return
		default:
			w.pos++
		}
	}
}

// skipString passes over the string at pos.
func (w *walker) skipString() {
	w.pos++ // "
	for w.pos < len(w.data) {
		switch w.data[w.pos] {
		case '\\':
			w.pos += 2
		case '"':
			w.pos++
			return
		default:
			w.pos++
		}
	}
}

// A fieldSet is a struct type's fields as encoding/json decodes into them.
type fieldSet struct {
	byName   map[string]field
	byFold   map[string]field
	embedded []reflect.Type // the structs behind embedded pointers
}

// A field is where a key decodes: into typ, behind embedded pointer via
// (-1: none); name is its JSON name.
type field struct {
	typ  reflect.Type
	via  int
	name string
}

// lookup finds the field key decodes into: the one of that name, else of
// that name in other case (ASCII only, as every field here is named).
func (fs *fieldSet) lookup(key []byte) (field, bool) {
	if f, ok := fs.byName[string(key)]; ok {
		return f, true
	}
	var buf [64]byte
	if len(key) > len(buf) {
		return field{}, false
	}
	lower := buf[:len(key)]
	for i, c := range key {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower[i] = c
	}
	f, ok := fs.byFold[string(lower)]
	return f, ok
}

// fieldsOf returns t's fields, found once per type.
func (w *walker) fieldsOf(t reflect.Type) *fieldSet {
	if fs, ok := w.fields[t]; ok {
		return fs
	}
	fs := &fieldSet{byName: map[string]field{}, byFold: map[string]field{}}
	w.fields[t] = fs
	fs.add(t, -1, 0)
	return fs
}

// add adds t's fields, those of embedded structs promoted, as encoding/json
// does; the shallower of two fields of one name wins.
func (fs *fieldSet) add(t reflect.Type, via, depth int) {
	if depth > 16 {
		return
	}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := sf.Type
		if sf.Anonymous && name == "" {
			inner, v := ft, via
			if inner.Kind() == reflect.Pointer {
				inner = inner.Elem()
				if inner.Kind() == reflect.Struct && len(fs.embedded) < 64 {
					fs.embedded = append(fs.embedded, inner)
					v = len(fs.embedded) - 1
				}
			}
			if inner.Kind() == reflect.Struct {
				fs.add(inner, v, depth+1)
				continue
			}
		}
		if !sf.IsExported() {
			continue
		}
		if name == "" {
			name = sf.Name
		}
		if strings.Contains(tag, ",string") {
			ft = nil // a number or bool written as a string: nothing to allocate
		}
		f := field{typ: ft, via: via, name: name}
		if _, ok := fs.byName[name]; !ok {
			fs.byName[name] = f
		}
		if _, ok := fs.byFold[strings.ToLower(name)]; !ok {
			fs.byFold[strings.ToLower(name)] = f
		}
	}
}
