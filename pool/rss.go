package pool

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
)

// ErrNoRSS is returned where the platform does not expose the resident set
// through /proc (anything but Linux).
var ErrNoRSS = errors.New("pool: resident-set size is not available on this platform")

// PeakRSS returns the process's peak resident-set size in bytes (VmHWM in
// /proc/self/status): the most physical memory it has held at once since it
// started or since the last ResetPeakRSS.
func PeakRSS() (int64, error) { return procStatus("VmHWM:") }

// RSS returns the process's current resident-set size in bytes (VmRSS).
func RSS() (int64, error) { return procStatus("VmRSS:") }

// ResetPeakRSS resets the peak that PeakRSS reports to the current RSS, so a
// benchmark can measure one run (Linux ≥ 4.0; writes 5 to
// /proc/self/clear_refs).
func ResetPeakRSS() error {
	err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
	if errors.Is(err, os.ErrNotExist) {
		return ErrNoRSS
	}
	return err
}

func procStatus(key string) (int64, error) {
	data, err := os.ReadFile("/proc/self/status")
	if errors.Is(err, os.ErrNotExist) {
		return 0, ErrNoRSS
	}
	if err != nil {
		return 0, err
	}
	return parseStatus(data, key)
}

// parseStatus finds "key  N kB" in a /proc status file and returns N·1024.
func parseStatus(data []byte, key string) (int64, error) {
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Bytes()
		if !bytes.HasPrefix(line, []byte(key)) {
			continue
		}
		f := bytes.Fields(line[len(key):])
		if len(f) != 2 || string(f[1]) != "kB" {
			return 0, fmt.Errorf("pool: /proc/self/status: malformed %s line %q", key, line)
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			return 0, fmt.Errorf("pool: /proc/self/status: malformed %s value %q", key, f[0])
		}
		return kb << 10, nil
	}
	return 0, fmt.Errorf("pool: /proc/self/status has no %s line", key)
}

// PhysicalMemory returns the machine's physical memory in bytes (MemTotal in
// /proc/meminfo).
func PhysicalMemory() (int64, error) {
	data, err := os.ReadFile("/proc/meminfo")
	if errors.Is(err, os.ErrNotExist) {
		return 0, ErrNoRSS
	}
	if err != nil {
		return 0, err
	}
	return parseStatus(data, "MemTotal:")
}
