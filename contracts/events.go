package contracts

import "strings"

// Timeline event types: the Type of each Event the contract workflow appends to its hash
// chain. They are a public vocabulary: recorded histories replay them, and the index,
// bundles and settlements on users' disks hold them. Add names; never change a value.
const (
	// Quote and approval.
	EventQuoted          = "quoted"           // hash, requester, goal, quote_expires_at
	EventBaseCheck       = "discrimination"   // (the base check's older name) base, failing_on_base, regression_guards, checked_on
	EventApprovalRefused = "approval_refused" // hash, approver, channel, message_id, why
	EventApproved        = "approved"         // hash, approver, channel, message_id
	EventQuoteExpired    = "quote_expired"    // after or quote_expires_at

	// Cancellation.
	EventCancelRequested = "cancel_requested" // by, reason
	EventCancelRefused   = "cancel_refused"   // by, why
	EventCancelled       = "cancelled"        // by, reason, before, or why

	// Payment authorization.
	EventPaymentError         = "payment_error"          // error
	EventPaymentRequested     = "payment_requested"      // provider, session, local
	EventPaymentSignal        = "payment_signal"         // source, session
	EventPaymentNotAuthorized = "payment_not_authorized" // after or state
	EventPaymentStatusError   = "payment_status_error"   // error
	EventPaymentAuthorized    = "payment_authorized"     // payment_intent

	// The repository lock.
	EventLockError        = "lock_error"         // error
	EventLockRequested    = "lock_requested"     // repo
	EventLockAcquired     = "lock_acquired"      // repo
	EventLockReleaseError = "lock_release_error" // error
	EventLockReleased     = "lock_released"      // repo

	// Attempts and verification.
	EventAttemptStarted    = "attempt_started"     // attempt, parent
	EventExecuted          = "executed"            // attempt, commit, empty, diff
	EventPublished         = "published"           // commit, branch, pr
	EventPreviewBuilt      = "preview_built"       // attempt, build_passed
	EventVerifying         = "verifying"           // attempt, try
	EventPreviewStopError  = "preview_stop_error"  // preview, error
	EventVerdict           = "verdict"             // attempt, try, commit, verdict, summary
	EventRecordError       = "record_error"        // error
	EventReverify          = "reverify"            // attempt, try
	EventPausedForOperator = "paused_for_operator" // attempt, deadline
	EventOperatorDeadline  = "operator_deadline"   // after
	EventRetryVerification = "retry_verification"  // by
	EventAbandoned         = "abandoned"           // by, reason
	EventIndexError        = "index_error"         // error

	// Settling the payment.
	EventPaymentCaptured       = "payment_captured"        // payment_intent
	EventCaptureRefused        = "capture_refused"         // error
	EventPaymentCancelError    = "payment_cancel_error"    // error
	EventPaymentCancelled      = "payment_cancelled"       // reason
	EventSettlementRecorded    = "settlement_recorded"     // payment, path
	EventSettlementRecordError = "settlement_record_error" // error

	// Merge eligibility and the PR watch.
	EventMergeEligible           = "merge_eligible"            // head
	EventMergeIneligible         = "merge_ineligible"          // head, verified
	EventMergeEligibilityUnknown = "merge_eligibility_unknown" // error
	EventMergeEligibilityRevoked = "merge_eligibility_revoked" // head, verified, why
	EventPRWatchEnded            = "pr_watch_ended"            // after
)

// ErrorEventSuffix ends the type of every event that records a failed side effect; such
// events carry the failure in DataError.
const ErrorEventSuffix = "_error"

// IsErrorEvent reports whether an event type records a failed side effect.
func IsErrorEvent(typ string) bool { return strings.HasSuffix(typ, ErrorEventSuffix) }

// Keys of Event.Data. Values are strings: numbers in decimal, booleans "true" or "false",
// times in RFC 3339.
const (
	DataAfter            = "after" // a timeout, as a Go duration
	DataApprover         = "approver"
	DataAttempt          = "attempt"
	DataBase             = "base" // the base commit SHA
	DataBefore           = "before"
	DataBranch           = "branch"
	DataBuildPassed      = "build_passed"
	DataBy               = "by"
	DataChannel          = "channel"
	DataCheckedOn        = "checked_on"
	DataCommit           = "commit"
	DataDeadline         = "deadline"
	DataDiff             = "diff"
	DataEmpty            = "empty"
	DataError            = "error"
	DataFailingOnBase    = "failing_on_base"
	DataGoal             = "goal"
	DataHash             = "hash"
	DataHead             = "head"
	DataLazyVariants     = "lazy_variants" // name: rejected by <criteria>, per lazy variant
	DataLocal            = "local"
	DataMessageID        = "message_id"
	DataParent           = "parent"
	DataPath             = "path"
	DataPayment          = "payment"
	DataPaymentIntent    = "payment_intent"
	DataPR               = "pr"
	DataPreview          = "preview"
	DataProvider         = "provider"
	DataQuoteExpiresAt   = "quote_expires_at"
	DataReason           = "reason"
	DataRegressionGuards = "regression_guards"
	DataRepo             = "repo"
	DataRequester        = "requester"
	DataSession          = "session"
	DataSource           = "source"
	DataState            = "state"
	DataSummary          = "summary"
	DataTry              = "try"
	DataVerdict          = "verdict"
	DataVerified         = "verified"
	DataWhy              = "why"
)

// Kinds of the short notices the contract workflow sends the requester beside the timeline
// (capability.Notice.Kind); the chat bridge adds what to do next by kind.
const (
	NoticePayment   = "payment"   // authorize the payment at the checkout link
	NoticeExecuted  = "executed"  // an attempt committed a change
	NoticeBuild     = "build"     // the preview built; verification starts
	NoticePaused    = "paused"    // verification paused for an operator
	NoticeVerdict   = "verdict"   // an attempt's verdict
	NoticeCaptured  = "captured"  // the payment was captured
	NoticeCancelled = "cancelled" // the authorization was cancelled
	NoticeRevoked   = "revoked"   // merge eligibility was revoked
)
