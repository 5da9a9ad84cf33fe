//go:build tools

// Package tools pins the kwok main package so `go mod tidy` keeps it.
package tools

import _ "sigs.k8s.io/kwok/cmd/kwok"
