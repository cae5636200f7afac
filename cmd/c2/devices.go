package main

import (
	"errors"
	"flag"
	"fmt"

	"github.com/sealc2/c2/gpu/cuda"
)

func runDevices(fs *flag.FlagSet, args []string) error {
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	n, err := cuda.DeviceCount()
	switch {
	case errors.Is(err, cuda.ErrNoLibrary):
		fmt.Printf("no CUDA library: %v\nc2 proves on the CPU. Build libc2cuda.so with `make cuda` and put it beside the executable or set C2_CUDA_LIB.\n", err)
		return nil
	case errors.Is(err, cuda.ErrNoDevice):
		fmt.Printf("CUDA library loaded, but no device: %v\nc2 proves on the CPU.\n", err)
		return nil
	case err != nil:
		return err
	}
	fmt.Printf("%d CUDA device(s)\n", n)
	for i := 0; i < n; i++ {
		d, err := cuda.Open(i)
		if err != nil {
			fmt.Printf("  %d: cannot open: %v\n", i, err)
			continue
		}
		info := d.Info()
		fmt.Printf("  %d: %s, %.1f GiB, %d SMs, compute capability %d.%d\n",
			i, info.Name, float64(info.TotalMemory)/(1<<30), info.SMCount, info.Major, info.Minor)
		d.Close()
	}
	return nil
}
