package fielderr

import (
	"errors"
	"io"
	"testing"
)

type kindA struct{}

func (kindA) Subject() string { return "a: input" }

type kindB struct{}

func (kindB) Subject() string { return "b: input" }

func TestError(t *testing.T) {
	whole := &Error[kindA]{Err: io.ErrUnexpectedEOF}
	if got, want := whole.Error(), "a: input: unexpected EOF"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	at := Errorf[kindA]("x[1].y", "%d bytes", 3)
	if got, want := at.Error(), "a: input: x[1].y: 3 bytes"; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(Wrap[kindA]("x", io.EOF), io.EOF) {
		t.Fatal("Wrap's error does not unwrap to its cause")
	}
	// Kinds are distinct types: errors.As tells them apart.
	var b *Error[kindB]
	if errors.As(error(at), &b) {
		t.Fatal("an Error[kindA] is taken for an Error[kindB]")
	}
	var a *Error[kindA]
	if !errors.As(Wrap[kindA]("x", io.EOF), &a) || a.Field != "x" {
		t.Fatalf("errors.As: %+v", a)
	}
}
