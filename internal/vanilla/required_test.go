package vanilla

import (
	"errors"
	"testing"

	"github.com/sealc2/c2/porep"
)

func TestObjectRequired(t *testing.T) {
	type mirror struct {
		A     *int `json:"a"`
		Inner *struct {
			B *[]int `json:"b,omitempty"`
		} `json:"inner"`
		C *int `json:"c"`
		D int  `json:"d"`
	}
	for _, c := range []struct{ in, field string }{
		{`{"a":1,"inner":{"b":[]},"c":2}`, ""},
		{`{"inner":{"b":[]},"c":2}`, "x.a"},
		{`{"a":null,"inner":{"b":[]},"c":2}`, "x.a"},
		{`{"a":1,"c":2}`, "x.inner"},
		{`{"a":1,"inner":{},"c":2}`, "x.inner.b"},
		{`{"a":1,"inner":{}}`, "x.inner.b"},
		{`{"a":1,"inner":{"b":[]}}`, "x.c"},
	} {
		var m mirror
		err := Object([]byte(c.in), &m, "x")
		if c.field == "" {
			if err != nil {
				t.Errorf("%s: %v", c.in, err)
			}
			continue
		}
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != c.field || !errors.Is(err, porep.ErrMissingField) {
			t.Errorf("%s: got %v, want %s: missing field", c.in, err, c.field)
		}
	}
}
