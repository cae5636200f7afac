package parallel

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// FirstError runs every call and returns the lowest failing index's error,
// even when a higher one fails first.
func TestFirstError(t *testing.T) {
	require.NoError(t, FirstError(0, func(int) error { return errors.New("never called") }))
	var calls atomic.Int32
	err := FirstError(100, func(i int) error {
		calls.Add(1)
		switch i {
		case 7:
			time.Sleep(20 * time.Millisecond) // fails after 60 has
			return fmt.Errorf("item %d", i)
		case 60:
			return fmt.Errorf("item %d", i)
		}
		return nil
	})
	require.EqualError(t, err, "item 7")
	require.Equal(t, int32(100), calls.Load())
	require.NoError(t, FirstError(10, func(int) error { return nil }))
}
