package workflows

// Change ids of workflow.GetVersion, one per change to a workflow's command sequence. A
// change id, once recorded in a history, is never renamed or reused: histories in replays/
// carry them as markers. Add a change here with one line saying why, then branch on it.
const (
	// versionSignedSettlement: the control worker signs how the contract ended
	// (RecordSettlement) after the payment settles.
	versionSignedSettlement = "signed-settlement"

	// versionIndexUnapprovedEnd: a contract that ends before approval (cancelled, expired)
	// updates the index, so the index does not stay at quoted.
	versionIndexUnapprovedEnd = "index-unapproved-end"

	// versionStrangerRefusals: approvals by anyone but the requester are recorded once, then
	// only counted (Status.StrangerRefusals), so a stranger cannot grow the timeline.
	versionStrangerRefusals = "stranger-refusals-counted"

	// versionCancelSpentTimers: a deadline or poll timer is cancelled once what it bounded
	// has happened (approval taken, payment authorized, operator answered), instead of
	// staying pending and firing later into the history.
	versionCancelSpentTimers = "cancel-spent-timers"

	// versionLazyVariants: the base check also runs the criteria on the contract's lazy
	// variants (BaseCheckInput.Variants) on the same preview, before it is stopped.
	versionLazyVariants = "lazy-variants"

	// versionLockPublishOnly: the repository lock is held around each publish (the branch
	// and the pull request) instead of the whole run, so contracts on one repository execute
	// and verify at the same time.
	versionLockPublishOnly = "lock-publish-only"

	// versionLocalBookkeeping: the index update and the progress notice run as local
	// activities in the control worker's workflow task, not as activities on the control
	// queue, so each costs no round trip through the server.
	versionLocalBookkeeping = "local-bookkeeping"

	// versionLocalReads: the payment's status and the pull request's head are read as local
	// activities in the control worker's workflow task, as the bookkeeping is: each is a
	// read the control worker answers in milliseconds.
	versionLocalReads = "local-reads"

	// versionLockGrantByUpdate: the repo lock also takes requests by update
	// (UpdateLockAcquire) and grants a free lock in the answer, with no signal back; it answers
	// QueryLockState; a lease timer is cancelled once the holder releases.
	versionLockGrantByUpdate = "lock-grant-by-update"

	// versionLockByUpdate: a contract asks for the repo lock with a local activity that sends
	// the lock's update (Control.AcquireLock) and gives it back with one that signals
	// (Control.ReleaseLock): a free lock costs the contract no workflow task, where a request
	// activity, a grant signal and a release signal cost three.
	versionLockByUpdate = "lock-by-update"

	// versionLocalRecords: the attempt's signed bundle and the signed settlement are written
	// as local activities in the control worker's workflow task (contractRun.controlQuick):
	// each is a signature and a write the control worker makes in milliseconds, and each
	// cost a workflow task and three history writes as an activity (BenchmarkContracts).
	versionLocalRecords = "local-records"
)
