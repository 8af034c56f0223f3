package preview

import "os"

// RunAsUser reads a --run-as setting, the one meaning every command gives it (the execute
// queue's previews, the coding CLI, a local base check): "-" is this process's own user, ""
// is DefaultUser when this process is root (and can switch) and its own user otherwise.
func RunAsUser(setting string) string {
	switch {
	case setting == "-":
		return ""
	case setting == "" && os.Geteuid() == 0:
		return DefaultUser
	}
	return setting
}
