package workers

import (
	"github.com/signoff/signoff/internal/sandbox"
)

// sandbox is cfg's sandbox, or a default one when the caller set none.
func (c Config) sandbox() (*sandbox.Runner, error) {
	if c.Sandbox != nil {
		return c.Sandbox.Get()
	}
	return sandbox.Default(false)
}
