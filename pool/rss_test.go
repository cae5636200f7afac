package pool

import (
	"errors"
	"runtime"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseStatus(t *testing.T) {
	data := []byte("Name:\tx\nVmPeak:\t  100 kB\nVmHWM:\t    2048 kB\nVmRSS:\t 1024 kB\n")
	v, err := parseStatus(data, "VmHWM:")
	require.NoError(t, err)
	assert.Equal(t, int64(2048*1024), v)
	_, err = parseStatus(data, "VmSwap:")
	require.Error(t, err)
	_, err = parseStatus([]byte("VmHWM: lots kB\n"), "VmHWM:")
	require.Error(t, err)
	_, err = parseStatus([]byte("VmHWM: 12 MB\n"), "VmHWM:")
	require.Error(t, err)
}

func TestPeakRSS(t *testing.T) {
	if runtime.GOOS != "linux" {
		_, err := PeakRSS()
		require.True(t, errors.Is(err, ErrNoRSS))
		return
	}
	before, err := PeakRSS()
	require.NoError(t, err)
	// Touch 64 MiB: the peak must grow past the current RSS plus most of it.
	buf := make([]byte, 64<<20)
	for i := 0; i < len(buf); i += 4096 {
		buf[i] = 1
	}
	rss, err := RSS()
	require.NoError(t, err)
	peak, err := PeakRSS()
	require.NoError(t, err)
	runtime.KeepAlive(buf)
	assert.GreaterOrEqual(t, peak, rss)
	assert.GreaterOrEqual(t, peak, before)
	assert.Greater(t, rss, int64(48<<20))
}

func TestPhysicalMemory(t *testing.T) {
	m, err := PhysicalMemory()
	if runtime.GOOS != "linux" {
		require.ErrorIs(t, err, ErrNoRSS)
		return
	}
	require.NoError(t, err)
	rss, err := RSS()
	require.NoError(t, err)
	assert.Greater(t, m, rss)
}
