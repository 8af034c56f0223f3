package devstack

import "context"

// ChatOptions configure the chat bridge (filled in by the chat wiring).
type ChatOptions struct{}

// mountChat puts the chat bridge on the public listener.
func mountChat(ctx context.Context, s *Stack, o Options) error { return nil }
