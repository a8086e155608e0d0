package secrets

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

const value = "hunter2-very-secret"

// holder has the shapes in which a Secret is usually printed.
type holder struct {
	Password Secret
	Props    map[string]Secret
	List     []Secret
	Ptr      *Secret
}

func TestSecretRedaction(t *testing.T) {
	s := Secret(value)
	h := holder{Password: s, Props: map[string]Secret{"sasl.jaas.config": s}, List: []Secret{s}, Ptr: &s}
	var outputs []string
	for _, verb := range []string{"%s", "%v", "%q", "%+v", "%#v", "%x", "%X", "%d", "%10s", "%-8v", "%T"} {
		outputs = append(outputs, fmt.Sprintf(verb, s), fmt.Sprintf(verb, h), fmt.Sprintf(verb, &h))
	}
	outputs = append(outputs, fmt.Sprint(s), fmt.Sprintln(s, h), s.String(), s.GoString())
	outputs = append(outputs, fmt.Errorf("connect: password %v: %w", s, errors.New("denied")).Error())

	for _, newHandler := range []func(*bytes.Buffer) slog.Handler{
		func(b *bytes.Buffer) slog.Handler { return slog.NewTextHandler(b, nil) },
		func(b *bytes.Buffer) slog.Handler { return slog.NewJSONHandler(b, nil) },
	} {
		var b bytes.Buffer
		log := slog.New(newHandler(&b))
		log.Info("connect", "password", s, "holder", h, slog.Any("ptr", &s), slog.Group("g", "p", s))
		outputs = append(outputs, b.String())
	}
	j, err := json.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	y, err := yaml.Marshal(h)
	if err != nil {
		t.Fatal(err)
	}
	outputs = append(outputs, string(j), string(y))

	for _, out := range outputs {
		if strings.Contains(out, value) || strings.Contains(out, fmt.Sprintf("%x", value)) {
			t.Errorf("secret value printed: %s", out)
		}
	}
	if got := fmt.Sprintf("%v|%q|%#v", s, s, s); got != `******|"******"|secrets.Secret("******")` {
		t.Errorf("masks = %s", got)
	}
	if string(j) != `{"Password":"******","Props":{"sasl.jaas.config":"******"},"List":["******"],"Ptr":"******"}` {
		t.Errorf("JSON = %s", j)
	}
	if s.Reveal() != value || s.IsEmpty() || !Secret("").IsEmpty() {
		t.Error("Reveal or IsEmpty is wrong")
	}
}
