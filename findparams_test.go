package c2

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2/porep"
)

func TestFindParams(t *testing.T) {
	s, ok := porep.ShapeBySize(2048)
	require.True(t, ok)
	dir := t.TempDir()
	official := filepath.Join(dir, s.ParamsName()+".params")
	dev := filepath.Join(dir, DevParamsPrefix+s.ParamsName()+".params")

	_, _, err := FindParams(dir, s, ".params")
	require.ErrorIs(t, err, ErrNoParams, "empty directory")
	_, _, err = FindParams(filepath.Join(dir, "missing"), s, ".params")
	require.ErrorIs(t, err, ErrNoParams, "missing path")

	require.NoError(t, os.WriteFile(dev, nil, 0o644))
	got, isDev, err := FindParams(dir, s, ".params")
	require.NoError(t, err)
	require.Equal(t, dev, got)
	require.True(t, isDev)

	require.NoError(t, os.WriteFile(official, nil, 0o644))
	got, isDev, err = FindParams(dir, s, ".params")
	require.NoError(t, err)
	require.Equal(t, official, got, "the official file wins")
	require.False(t, isDev)

	_, _, err = FindParams(dir, s, ".vk")
	require.ErrorIs(t, err, ErrNoParams, "no .vk beside the .params")

	got, isDev, err = FindParams(dev, s, ".params")
	require.NoError(t, err)
	require.Equal(t, dev, got, "a file is taken as is")
	require.True(t, isDev)
}
