package vanilla

import (
	"reflect"
	"strings"
)

// Object unmarshals the serde JSON object b into v as [Strict] does, then
// checks its required members as [Required] does.
func Object(b []byte, v any, at string) error {
	if err := Strict(b, v, at); err != nil {
		return err
	}
	return Required(v, at)
}

// Required reports the first absent member of v, a pointer to a struct
// that mirrors a serde JSON object: each pointer field is a required member
// named by its json tag, absent when nil (missing or null in the JSON). A
// member that is itself such a struct is checked, as "name.member", before
// the fields after it; arrays are left to the caller. The error is a
// *FieldError below at wrapping [porep.ErrMissingField], as [Missing]
// returns.
func Required(v any, at string) error {
	return required(reflect.ValueOf(v).Elem(), at, "")
}

// required checks the struct s, its members' names prefixed with prefix.
func required(s reflect.Value, at, prefix string) error {
	t := s.Type()
	for i := range t.NumField() {
		f := s.Field(i)
		if f.Kind() != reflect.Pointer {
			continue
		}
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		name = prefix + name
		if f.IsNil() {
			return Missing(at, name)
		}
		if f.Elem().Kind() == reflect.Struct {
			if err := required(f.Elem(), at, name+"."); err != nil {
				return err
			}
		}
	}
	return nil
}
