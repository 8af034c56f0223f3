package devstack

// mountServices switches real services on from the environment and mounts their webhooks
// on the public listener (filled in by the services wiring).
func mountServices(s *Stack, o Options) error { return nil }
