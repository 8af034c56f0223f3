package contracts

// BaseCheck is the record of a contract's criteria run on its base commit before the quote
// was offered: which fail there (the change must fix them) and which already pass
// (regression guards). The workflow keeps it so the approver's view is part of the timeline.
type BaseCheck struct {
	BaseSHA string   `json:"base_sha"`
	Failing []string `json:"failing"`
	Guards  []string `json:"guards"`
	// Where says what ran the check: "queues" (execute and verify workers) or "local".
	Where string `json:"where,omitempty"`
	// ProofDir holds the check's signed evidence, screenshots and traces.
	ProofDir string `json:"proof_dir,omitempty"`
	// Variants are the lazy variants the criteria were run on before the quote, each
	// rejected by at least one criterion (a contract a variant satisfies is not offered).
	Variants []VariantOutcome `json:"variants,omitempty"`
}
