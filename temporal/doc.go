// Package temporal says how to reach Temporal: SDK client options and Dial for an external
// cluster, Temporal Cloud or the embedded server, and the embedded server's certificates,
// which the server makes and a client on the same machine finds (EmbeddedClientTLS).
//
// It links no server, so every command and test that only talks to Temporal stays small;
// temporal/embedded runs the server.
package temporal
