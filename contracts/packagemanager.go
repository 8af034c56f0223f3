package contracts

import "strings"

// Package managers a contract's stack may name. The lockfile decides, in this order; a
// repository without one installs with npm (and is not reproducible).
const (
	PackageManagerNPM  = "npm"
	PackageManagerBun  = "bun"
	PackageManagerPNPM = "pnpm"
	PackageManagerYarn = "yarn"
)

// Lockfiles maps each lockfile name to its package manager, in detection order.
var Lockfiles = []struct{ File, PackageManager string }{
	{"package-lock.json", PackageManagerNPM},
	{"bun.lock", PackageManagerBun},
	{"bun.lockb", PackageManagerBun},
	{"pnpm-lock.yaml", PackageManagerPNPM},
	{"yarn.lock", PackageManagerYarn},
}

// DetectPackageManager is the package manager and lockfile of an app folder, given whether a
// file name exists in it. Without a lockfile it is npm and "".
func DetectPackageManager(has func(name string) bool) (pm, lockfile string) {
	for _, lf := range Lockfiles {
		if has(lf.File) {
			return lf.PackageManager, lf.File
		}
	}
	return PackageManagerNPM, ""
}

// StackCommands are the install, build and start commands of a package manager, as words:
// what a contract's stack states (joined by spaces) and what the preview runs, the same
// words (the preview only adds where caches go, and the host and port to start on). ok is
// false for a package manager Signoff does not run.
func StackCommands(pm string, locked bool) (install, build, start []string, ok bool) {
	switch pm {
	case PackageManagerBun:
		return []string{"bun", "install", "--frozen-lockfile"}, []string{"bun", "run", "build"}, []string{"bun", "run", "start"}, true
	case PackageManagerPNPM:
		return []string{"pnpm", "install", "--frozen-lockfile"}, []string{"pnpm", "run", "build"}, []string{"pnpm", "run", "start"}, true
	case PackageManagerYarn:
		return []string{"yarn", "install", "--frozen-lockfile"}, []string{"yarn", "build"}, []string{"yarn", "start"}, true
	case PackageManagerNPM, "":
		install = []string{"npm", "ci"}
		if !locked {
			install = []string{"npm", "install"}
		}
		return install, []string{"npm", "run", "build"}, []string{"npm", "run", "start"}, true
	}
	return nil, nil, nil, false
}

// Command joins command words as a contract's stack states them.
func Command(words []string) string { return strings.Join(words, " ") }
