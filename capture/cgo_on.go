//go:build cgo

package capture

const cgoEnabled = true
