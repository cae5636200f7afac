module github.com/sealc2/c2

go 1.26.8

require (
	github.com/consensys/gnark-crypto v0.22.0 // indirect
	github.com/stretchr/testify v1.12.1 // indirect
	golang.org/x/sync v0.25.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
