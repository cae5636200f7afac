//go:build !unix

package devparams

// lockFile takes no lock where flock does not exist: concurrent callers may
// then generate twice, each renaming whole files into place.
func lockFile(path string) (unlock func(), err error) { return func() {}, nil }
