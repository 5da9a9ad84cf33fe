//go:build tools

// Package tools pins the Karpenter module this folder builds.
package tools

import _ "sigs.k8s.io/karpenter/kwok"
