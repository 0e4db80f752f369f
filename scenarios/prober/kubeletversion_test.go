package prober

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A version reads and writes as "1.<minor>"; anything but a modelled
// version is refused with the versions that are.
func TestKubeletVersionText(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]KubeletVersion{"1.37": 37, "1.20": 20, "v1.30": 30} {
		var v KubeletVersion
		if err := v.UnmarshalText([]byte(text)); err != nil || v != want {
			t.Errorf("%q: %d, %v; want %d", text, v, err, want)
		}
	}
	for _, text := range []string{"1.19", "1.38", "2.30", "1.030", "1.30.2", "1.0", "1.", "", "37", "latest"} {
		var v KubeletVersion
		if err := v.UnmarshalText([]byte(text)); err == nil || !strings.Contains(err.Error(), "1.20 to 1.37") {
			t.Errorf("%q: error %v, want one naming 1.20 to 1.37", text, err)
		}
	}
	if err := KubeletVersion(12).Check(); err == nil || !strings.Contains(err.Error(), "1.12 is not modelled: want 1.20 to 1.37") {
		t.Errorf("Check of 1.12: %v", err)
	}
	if err := KubeletVersion(0).Check(); err != nil {
		t.Errorf("Check of the zero value: %v", err)
	}

	// JSON: a string round-trips; a number, which cannot say 1.30, is
	// refused.
	var v KubeletVersion
	if err := json.Unmarshal([]byte(`"1.30"`), &v); err != nil || v != 30 {
		t.Errorf(`"1.30" in JSON: %d, %v`, v, err)
	}
	if b, err := json.Marshal(v); err != nil || string(b) != `"1.30"` {
		t.Errorf("1.30 to JSON: %s, %v", b, err)
	}
	if err := json.Unmarshal([]byte(`1.3`), &v); err == nil || !strings.Contains(err.Error(), `want a string such as "1.30"`) {
		t.Errorf("the number 1.3 in JSON: %v", err)
	}
	if s := KubeletVersion(0).String(); s != "1.37" {
		t.Errorf("the zero value reads %q, want the default 1.37", s)
	}
}

// KubeletConfig.Version reaches the probe: its User-Agent follows the
// version; a version not modelled is refused by NewKubelet.
func TestKubeletVersionConfig(t *testing.T) {
	t.Parallel()
	got := make(chan string, 1)
	srv, _ := probeServer(t, func(w http.ResponseWriter, r *http.Request) { got <- r.UserAgent() })
	k, err := NewKubelet(KubeletConfig{URL: srv.URL, Version: 25, Timeout: 5 * time.Second}, NewDryContainer(nil))
	if err != nil {
		t.Fatal(err)
	}
	if res := k.probe(t.Context()); res.Outcome != Success {
		t.Fatalf("result %+v", res)
	}
	if ua := <-got; ua != "kube-probe/1.25" {
		t.Errorf("User-Agent %q with version 1.25", ua)
	}

	_, err = NewKubelet(KubeletConfig{URL: srv.URL, Version: 12}, NewDryContainer(nil))
	if err == nil || !strings.Contains(err.Error(), "kubelet version 1.12 is not modelled") {
		t.Errorf("version 1.12: %v, want it refused", err)
	}
}
