//go:build !linux

package durable

import "os"

// StartWriteback does nothing here: the later sync writes the file.
func StartWriteback(*os.File) {}
