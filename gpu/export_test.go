package gpu

// Exported for the external tests of this directory (gputest_test.go).
var (
	CheckSlot = checkSlot
	TestKey   = testKey
)
