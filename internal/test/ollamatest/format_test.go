package ollamatest_test

import (
	"strings"
	"testing"

	"flow/internal/test/ollamatest"
)

func TestRecordedFormat(t *testing.T) {
	t.Parallel()
	srv := ollamatest.New(t)
	if err := srv.LoadScript([]byte(`{"turns": [{}, {}, {}, {}]}`)); err != nil {
		t.Fatal(err)
	}
	schema := `{"type":"object"}`
	bodies := []struct{ path, body, want string }{
		{"/api/chat", `{"model":"m","stream":false,"format":` + schema + `}`, schema},
		{"/api/chat", `{"model":"m","stream":false}`, ""},
		{"/v1/chat/completions", `{"model":"m","response_format":{"type":"json_schema","json_schema":{"name":"v","schema":` + schema + `}}}`, schema},
		{"/v1/chat/completions", `{"model":"m","response_format":{"type":"json_object"}}`, `"json"`},
	}
	for _, b := range bodies {
		status, _, body := post(t, srv, b.path, b.body)
		if status != 200 {
			t.Fatalf("POST %s = %d %s", b.path, status, body)
		}
		// An empty turn is an empty reply: no content, no tool calls.
		if strings.Contains(body, "tool_calls") || strings.Contains(body, `"content":"x`) {
			t.Errorf("POST %s answer = %s, want an empty reply", b.path, body)
		}
	}
	for i, r := range srv.Requests() {
		if got := string(r.Format()); got != bodies[i].want {
			t.Errorf("request %d Format() = %s, want %s", i, got, bodies[i].want)
		}
	}
}
