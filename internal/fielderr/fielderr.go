// Package fielderr holds the error type of an input that cannot be decoded
// or does not fit, naming the offending value by its path. Each kind of
// input (a C1 output, a PoSt or a SnapDeals vanilla proof) gets its own
// type, Error[K], so that errors.As tells the kinds apart while they share
// one implementation.
package fielderr

import "fmt"

// Kind is a kind of input. Subject returns what its errors' messages start
// with, e.g. "post: vanilla proof".
type Kind interface{ Subject() string }

// Error reports a K input that cannot be decoded or does not fit. Field is
// the path of the offending value ("" for the input as a whole), Err the
// cause.
type Error[K Kind] struct {
	Field string
	Err   error
}

// Error returns "subject: field: cause", or "subject: cause" when Field is
// empty.
func (e *Error[K]) Error() string {
	var k K
	if e.Field == "" {
		return fmt.Sprintf("%s: %v", k.Subject(), e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", k.Subject(), e.Field, e.Err)
}

func (e *Error[K]) Unwrap() error { return e.Err }

// Errorf returns an *Error[K] at field whose cause is formatted from
// format and args.
func Errorf[K Kind](field, format string, args ...any) *Error[K] {
	return &Error[K]{field, fmt.Errorf(format, args...)}
}

// Wrap returns an *Error[K] at field with cause err, as an error: the form
// vanilla.Place takes to turn a field error into a K error.
func Wrap[K Kind](field string, err error) error {
	return &Error[K]{field, err}
}
