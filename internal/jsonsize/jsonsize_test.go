package jsonsize

import (
	"encoding/json"
	"errors"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"
)

type outage struct {
	Start, End float64
	Detected   bool
}

type config struct {
	Outages []outage `json:"outages"`
	Note    string   `json:"note"`
	Skipped []outage `json:"-"`
	When    time.Time
}

type report struct {
	Configs map[string]config `json:"configs"`
	Order   []string          `json:"order"`
}

type run struct {
	Report *report `json:"report"`
	Pass   int     `json:"pass"`
}

type matrix struct {
	Runs []run `json:"runs"`
	*extra
}

type extra struct{ Names []string }

// An array of {} counts as many whole elements; the largest part is named
// by its path, keys matched as encoding/json matches them.
func TestOfCountsElementsAndNamesTheLargest(t *testing.T) {
	doc := `{"runs":[{"pass":1,"report":null},{"Report":{"configs":{"x":{"OUTAGES":[` + strings.Repeat("{},", 99) + `{}],"note":"abc"}},"order":["x"]}}],` +
		`"unknown":[1,2,3],"names":["a"]}`
	est, err := Of([]byte(doc), reflect.TypeFor[matrix]())
	if err != nil {
		t.Fatal(err)
	}
	outages := int64(100 * reflect.TypeFor[outage]().Size())
	want := 2*int64(reflect.TypeFor[run]().Size()) + int64(reflect.TypeFor[report]().Size()) + // the runs, one report
		int64(reflect.TypeFor[string]().Size()+reflect.TypeFor[config]().Size()) + 1 + // its configs, key "x"
		outages + 5 + // the outages, "abc"
		int64(reflect.TypeFor[string]().Size()) + 3 + // order
		int64(reflect.TypeFor[extra]().Size()) + int64(reflect.TypeFor[string]().Size()) + 3 // the embedded names
	if est.Bytes != want {
		t.Errorf("estimate %d bytes, want %d", est.Bytes, want)
	}
	if p := est.Largest; p.Path != "runs[1].Report.configs.x.OUTAGES" || p.Count != 100 || p.Text != 301 || p.Bytes != outages {
		t.Errorf("largest part %+v, want the 100 outages", p)
	}
}

// What is not JSON is refused with encoding/json's error; null, types of
// their own decoding and mismatched values count by their text at most.
func TestOfEdges(t *testing.T) {
	for _, bad := range []string{"", "{", `{"runs":[}`, `[1,]`} {
		if _, err := Of([]byte(bad), reflect.TypeFor[matrix]()); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	for doc, want := range map[string]int64{
		`null`:                              0,
		`{"runs":"text"}`:                   0,
		`{"runs":[1,true,"x"]}`:             3 * int64(reflect.TypeFor[run]().Size()),
		`[{"When":"2026-01-02T03:04:05Z"}]`: int64(reflect.TypeFor[config]().Size()) + 22,
	} {
		typ := reflect.TypeFor[matrix]()
		if strings.HasPrefix(doc, "[") {
			typ = reflect.TypeFor[[]config]()
		}
		if est, err := Of([]byte(doc), typ); err != nil || est.Bytes != want {
			t.Errorf("%s: %d bytes, %v; want %d", doc, est.Bytes, err, want)
		}
	}
	deep := strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2)
	if _, err := Of([]byte(deep), reflect.TypeFor[any]()); err == nil {
		t.Error("a document nested too deep passed")
	}
}

// The estimate is a floor of what json.Unmarshal allocates: a dense
// document takes at least that.
func TestOfIsAFloorOfUnmarshal(t *testing.T) {
	doc := []byte(`{"runs":[` + strings.Repeat(`{"report":{"configs":{"x":{"outages":[{},{},{}]}}}},`, 2000) + `{}]}`)
	est, err := Of(doc, reflect.TypeFor[matrix]())
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	var m matrix
	if err := json.Unmarshal(doc, &m); err != nil {
		t.Fatal(err)
	}
	runtime.ReadMemStats(&after)
	if alloc := after.TotalAlloc - before.TotalAlloc; uint64(est.Bytes) > alloc {
		t.Errorf("estimate %d bytes, but Unmarshal allocated %d", est.Bytes, alloc)
	}
	if est.Bytes < 4*int64(len(doc)) {
		t.Errorf("estimate %d bytes for %d of dense text, want far more", est.Bytes, len(doc))
	}
}

// FuzzOf: Of never panics nor loops, refuses exactly what is not JSON, and
// names a largest part that lies in the document.
func FuzzOf(f *testing.F) {
	for _, s := range []string{`{"runs":[{"report":{"configs":{"x":{"outages":[{}]}}}}]}`, `[1,"a",{"b":[null]}]`, `"\u0041"`, `{"a\"b":1}`, ` [ ] `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for _, typ := range []reflect.Type{reflect.TypeFor[matrix](), reflect.TypeFor[any](), reflect.TypeFor[[]config]()} {
			est, err := Of(b, typ)
			if valid := json.Valid(b); (err == nil) != valid && !strings.Contains(err.Error(), "nested deeper") {
				t.Fatalf("valid %v, but Of: %v", valid, err)
			}
			if est.Bytes < 0 || est.Largest.Text > len(b) || est.Largest.Bytes > est.Bytes {
				t.Fatalf("estimate %+v of %d bytes", est, len(b))
			}
		}
	})
}

// Bound passes a document within its allowance and refuses a dense one,
// naming its densest array, as ErrTooDense.
func TestBound(t *testing.T) {
	typ := reflect.TypeFor[[]config]()
	dense := []byte("[" + strings.Repeat("{},", 999) + "{}]")
	if err := Bound(dense, typ, 4, 1<<20, nil); err != nil {
		t.Errorf("within the slack: %v", err)
	}
	err := Bound(dense, typ, 4, 0, nil)
	if want := "the document: 1000 entries in 3001 bytes would take"; !errors.Is(err, ErrTooDense) || !strings.Contains(err.Error(), want) {
		t.Errorf("Bound: %v, want ErrTooDense with %q", err, want)
	}
	if err := Bound([]byte("[{]"), typ, 4, 0, nil); err == nil || errors.Is(err, ErrTooDense) {
		t.Errorf("not JSON: %v", err)
	}
}

// OfLimited refuses an array past its limit, found by its fields whatever
// case its keys are written in, indices and map keys left out.
func TestOfLimited(t *testing.T) {
	limits := map[string]int{"runs.report.configs.*.outages": 2, "runs.report.order": 1}
	typ := reflect.TypeFor[matrix]()
	ok := `{"runs":[{"report":{"configs":{"x":{"outages":[{},{}]}},"order":["x"]}}]}`
	if _, err := OfLimited([]byte(ok), typ, limits); err != nil {
		t.Errorf("within the limits: %v", err)
	}
	for doc, want := range map[string]string{
		`{"runs":[{},{"REPORT":{"configs":{"y":{"Outages":[{},{},{}]}}}}]}`: "runs[1].REPORT.configs.y.Outages: 3 entries",
		`{"runs":[{"report":{"order":["x","y"]}}]}`:                         "runs[0].report.order: 2 entries",
	} {
		if _, err := OfLimited([]byte(doc), typ, limits); !errors.Is(err, ErrTooMany) || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want ErrTooMany with %q", doc, err, want)
		}
	}
}
