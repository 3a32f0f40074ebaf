//go:build !cgo

package sqlitefile

const cgoEnabled = false
