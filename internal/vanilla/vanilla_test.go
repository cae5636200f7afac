package vanilla

import (
	"errors"
	"testing"
)

func TestJoin(t *testing.T) {
	for _, c := range []struct{ prefix, rest, want string }{
		{"", "", ""}, {"", "a", "a"}, {"a", "", "a"}, {"a", "b", "a.b"}, {"a", "[2]", "a[2]"}, {"", "[2]", "[2]"},
	} {
		if got := Join(c.prefix, c.rest); got != c.want {
			t.Errorf("Join(%q, %q) = %q, want %q", c.prefix, c.rest, got, c.want)
		}
	}
}

func TestBincode(t *testing.T) {
	read := func(r *Reader) { r.U64("n") }
	if err := Bincode(make([]byte, 8), 8, read); err != nil {
		t.Fatal(err)
	}
	err := Bincode(make([]byte, 7), 8, read)
	var fe *FieldError
	if !errors.As(err, &fe) || fe.Field != "n" || !errors.Is(err, ErrTruncated) {
		t.Fatalf("truncated: %v", err)
	}
	if err := Bincode(make([]byte, 9), 16, read); err == nil || err.Error() != "1 trailing bytes" {
		t.Fatalf("trailing: %v", err)
	}
	if err := Bincode(make([]byte, 9), 8, read); err == nil || err.Error() != "9 bytes, more than 8" {
		t.Fatalf("size: %v", err)
	}
}

func TestPlace(t *testing.T) {
	mk := func(field string, err error) error { return errors.New(field + "|" + err.Error()) }
	if got := Place(Errorf("a.b", "bad"), mk); got.Error() != "a.b|bad" {
		t.Fatalf("got %v", got)
	}
	other := errors.New("other")
	if Place(other, mk) != other || Place(nil, mk) != nil {
		t.Fatal("Place changed an error that is not a *FieldError")
	}
}

// TestBincodeOrJSON: JSON is tried only after bincode fails and only on
// what reads as a JSON object; its error is then the one returned.
func TestBincodeOrJSON(t *testing.T) {
	errBin, errJSON := errors.New("bincode"), errors.New("json")
	bad := func([]byte) (*int, error) { return nil, errBin }
	one := 1
	good := func([]byte) (*int, error) { return &one, nil }
	badJSON := func([]byte) (*int, error) { return nil, errJSON }
	for _, c := range []struct {
		b            string
		bin, js      func([]byte) (*int, error)
		want         *int
		wantErr      error
		isJSONObject bool
	}{
		{"{", good, badJSON, &one, nil, true},
		{" \t\r\n{}", bad, good, &one, nil, true},
		{"{}", bad, badJSON, nil, errJSON, true},
		{"[{}]", bad, good, nil, errBin, false},
		{"", bad, good, nil, errBin, false},
	} {
		if got := IsJSONObject([]byte(c.b)); got != c.isJSONObject {
			t.Errorf("IsJSONObject(%q) = %v", c.b, got)
		}
		p, err := BincodeOrJSON([]byte(c.b), c.bin, c.js)
		if p != c.want || err != c.wantErr {
			t.Errorf("BincodeOrJSON(%q) = %v, %v; want %v, %v", c.b, p, err, c.want, c.wantErr)
		}
	}
}
