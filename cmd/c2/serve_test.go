package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sealc2/c2"
	"github.com/sealc2/c2/serve"
)

func TestServeDevices(t *testing.T) {
	var cfg serve.Config
	require.NoError(t, setDevices(&cfg, "cpu"))
	assert.Equal(t, "cpu", cfg.Backend)
	require.NoError(t, setDevices(&cfg, "0, 2"))
	assert.Equal(t, "cuda", cfg.Backend)
	assert.Equal(t, []int{0, 2}, cfg.Devices)
	assert.Error(t, setDevices(&cfg, "gpu0"))
}

func TestServeRefusesBadSettings(t *testing.T) {
	assert.Error(t, run(t, "serve", "--devices", "x"))
	assert.Error(t, run(t, "serve", "--config", filepath.Join(t.TempDir(), "missing.toml")))
	assert.ErrorContains(t, run(t, "serve", "--preload", "porep-3g"), "porep-3g")
	assert.ErrorContains(t, run(t, "serve", "--preload", "wpost-3g"), "wpost-3g")
	assert.ErrorContains(t, run(t, "serve", "--job-timeout", "winning=soon"), "winning=soon")
	assert.ErrorContains(t, run(t, "serve", "--job-timeout", "post=1s"), "post=1s")
	assert.ErrorContains(t, run(t, "serve", "--max-running", "porep=-1"), "porep=-1")
	assert.ErrorContains(t, run(t, "serve", "--max-running", "c2=1"), "c2=1")
	assert.Error(t, run(t, "serve", "--memory-limit", "lots"))
	assert.ErrorContains(t, run(t, "serve", "--insecure-dev-keys", "porep-3g"), "porep-3g")
	// Development keys need a device that makes them; the CPU does not,
	// and the daemon stops before it accepts jobs.
	assert.ErrorIs(t, run(t, "serve", "--devices", "cpu", "--listen", "127.0.0.1:0", "--metrics-listen", "none",
		"--insecure-dev-keys", "winning-2k"), c2.ErrNoKeyMaker)
	path := filepath.Join(t.TempDir(), "c2.toml")
	require.NoError(t, os.WriteFile(path, []byte(`backend = "tpu"`), 0o644))
	assert.ErrorContains(t, run(t, "serve", "--config", path), "tpu")
	assert.Error(t, run(t, "serve", "extra"))
}
