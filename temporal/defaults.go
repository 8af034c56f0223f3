package temporal

// Where a client finds the embedded server when told nothing else. The port matches
// `temporal server start-dev`, so the usual tools find it too.
const (
	DefaultHost         = "127.0.0.1"
	DefaultFrontendPort = 7233
	DefaultNamespace    = "default"
)
