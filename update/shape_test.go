package update

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestShapeByName(t *testing.T) {
	for _, s := range Shapes {
		got, ok := ShapeByName(s.Name)
		require.True(t, ok, s.Name)
		require.Equal(t, s, got)
	}
	_, ok := ShapeByName("StackedDrg32GiBV1_1")
	require.False(t, ok)
}
