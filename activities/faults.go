package activities

import "sync"

// PreviewFault is a deliberate preview defect that a prepared run asks for, so run W5 can
// show a verification_error end to end. Production previews have no plan.
type PreviewFault string

// Faults a prepared run can ask for, one per verification of a contract, in order.
const (
	FaultNone       PreviewFault = ""
	FaultOmitSHA    PreviewFault = "omit_sha"    // /__verification serves no SHA
	FaultStaleBuild PreviewFault = "stale_build" // the base commit is built and served
)

// FaultPlan hands out each contract's faults in order, then none.
type FaultPlan struct {
	mu   sync.Mutex
	plan map[string][]PreviewFault
	used map[string]int
}

// Set replaces the faults of one contract.
func (p *FaultPlan) Set(contractID string, faults []PreviewFault) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.plan == nil {
		p.plan, p.used = map[string][]PreviewFault{}, map[string]int{}
	}
	p.plan[contractID] = faults
	p.used[contractID] = 0
}

// Next returns the fault for the contract's next preview.
func (p *FaultPlan) Next(contractID string) PreviewFault {
	if p == nil {
		return FaultNone
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	n := p.used[contractID]
	if n >= len(p.plan[contractID]) {
		return FaultNone
	}
	p.used[contractID] = n + 1
	return p.plan[contractID][n]
}
