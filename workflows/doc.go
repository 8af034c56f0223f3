// Package workflows holds Signoff's Temporal workflows: one ContractWorkflow per completion
// contract, and a RepoLockWorkflow per repository so only one contract works on a repo at a
// time. Workflow code decides (the verdict policy runs here, it is deterministic); every side
// effect is an activity on the queue that holds its authority. What callers use to reach a
// workflow (names, inputs, answers) is in contractapi; this package is for the workers.
package workflows
