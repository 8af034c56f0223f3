package github_test

// Recorded responses for the stand-in api.github.com. Each is the example response GitHub
// publishes for the endpoint in its REST API documentation (the "Response" sample on the
// docs page, generated from github/rest-api-description; the same data is in
// github/docs src/rest/data/fpt-2022-11-28/*.json). Values are verbatim; long examples are
// abridged to the fields a client could reasonably read, in the documented order, and
// marked so. Nothing here was invented for the tests except where a comment says so.

// docUser is the documented "simple-user" example (octocat), as it appears inside the
// examples below.
const docUser = `{
    "login": "octocat",
    "id": 1,
    "node_id": "MDQ6VXNlcjE=",
    "avatar_url": "https://github.com/images/error/octocat_happy.gif",
    "gravatar_id": "",
    "url": "https://api.github.com/users/octocat",
    "html_url": "https://github.com/octocat",
    "followers_url": "https://api.github.com/users/octocat/followers",
    "following_url": "https://api.github.com/users/octocat/following{/other_user}",
    "gists_url": "https://api.github.com/users/octocat/gists{/gist_id}",
    "starred_url": "https://api.github.com/users/octocat/starred{/owner}{/repo}",
    "subscriptions_url": "https://api.github.com/users/octocat/subscriptions",
    "organizations_url": "https://api.github.com/users/octocat/orgs",
    "repos_url": "https://api.github.com/users/octocat/repos",
    "events_url": "https://api.github.com/users/octocat/events{/privacy}",
    "received_events_url": "https://api.github.com/users/octocat/received_events",
    "type": "User",
    "site_admin": false
  }`

// docRepository: "Get a repository", 200.
// https://docs.github.com/en/rest/repos/repos#get-a-repository (abridged).
const docRepository = `{
  "id": 1296269,
  "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
  "name": "Hello-World",
  "full_name": "octocat/Hello-World",
  "owner": ` + docUser + `,
  "private": false,
  "html_url": "https://github.com/octocat/Hello-World",
  "description": "This your first repo!",
  "fork": false,
  "url": "https://api.github.com/repos/octocat/Hello-World",
  "clone_url": "https://github.com/octocat/Hello-World.git",
  "ssh_url": "git@github.com:octocat/Hello-World.git",
  "homepage": "https://github.com",
  "default_branch": "master",
  "visibility": "public",
  "pushed_at": "2011-01-26T19:06:43Z",
  "created_at": "2011-01-26T19:01:12Z",
  "updated_at": "2011-01-26T19:14:43Z"
}`

// docRepoInPR is the repository as it appears in a pull request's head and base.
const docRepoInPR = `{
      "id": 1296269,
      "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
      "name": "Hello-World",
      "full_name": "octocat/Hello-World",
      "owner": ` + docUser + `,
      "private": false,
      "html_url": "https://github.com/octocat/Hello-World",
      "description": "This your first repo!",
      "fork": false,
      "url": "https://api.github.com/repos/octocat/Hello-World",
      "default_branch": "master"
    }`

// docPullRequest: the pull request example shared by "Create a pull request" (201),
// "Get a pull request" (200) and "Update a pull request" (200).
// https://docs.github.com/en/rest/pulls/pulls#create-a-pull-request
// https://docs.github.com/en/rest/pulls/pulls#get-a-pull-request
// https://docs.github.com/en/rest/pulls/pulls#update-a-pull-request
// (abridged: labels, milestone, assignees, reviewers, teams and _links left out.)
const docPullRequest = `{
  "url": "https://api.github.com/repos/octocat/Hello-World/pulls/1347",
  "id": 1,
  "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
  "html_url": "https://github.com/octocat/Hello-World/pull/1347",
  "diff_url": "https://github.com/octocat/Hello-World/pull/1347.diff",
  "patch_url": "https://github.com/octocat/Hello-World/pull/1347.patch",
  "issue_url": "https://api.github.com/repos/octocat/Hello-World/issues/1347",
  "commits_url": "https://api.github.com/repos/octocat/Hello-World/pulls/1347/commits",
  "review_comments_url": "https://api.github.com/repos/octocat/Hello-World/pulls/1347/comments",
  "review_comment_url": "https://api.github.com/repos/octocat/Hello-World/pulls/comments{/number}",
  "comments_url": "https://api.github.com/repos/octocat/Hello-World/issues/1347/comments",
  "statuses_url": "https://api.github.com/repos/octocat/Hello-World/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e",
  "number": 1347,
  "state": "open",
  "locked": true,
  "title": "Amazing new feature",
  "user": ` + docUser + `,
  "body": "Please pull these awesome changes in!",
  "active_lock_reason": "too heated",
  "created_at": "2011-01-26T19:01:12Z",
  "updated_at": "2011-01-26T19:01:12Z",
  "closed_at": "2011-01-26T19:01:12Z",
  "merged_at": "2011-01-26T19:01:12Z",
  "merge_commit_sha": "e5bd3914e2e596debea16f433f57875b5b90bcd6",
  "head": {
    "label": "octocat:new-topic",
    "ref": "new-topic",
    "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
    "user": ` + docUser + `,
    "repo": ` + docRepoInPR + `
  },
  "base": {
    "label": "octocat:master",
    "ref": "master",
    "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
    "user": ` + docUser + `,
    "repo": ` + docRepoInPR + `
  },
  "author_association": "OWNER",
  "auto_merge": null,
  "draft": false,
  "merged": false,
  "mergeable": true,
  "rebaseable": true,
  "mergeable_state": "clean",
  "merged_by": ` + docUser + `,
  "comments": 10,
  "review_comments": 0,
  "maintainer_can_modify": true,
  "commits": 3,
  "additions": 100,
  "deletions": 3,
  "changed_files": 5
}`

// docPullRequestList: "List pull requests", 200: an array of the pull-request-simple
// example. https://docs.github.com/en/rest/pulls/pulls#list-pull-requests (abridged as
// above; the simple form carries the same number, html_url, head and base).
const docPullRequestList = `[` + docPullRequest + `]`

// docStatus: "Create a commit status", 201.
// https://docs.github.com/en/rest/commits/statuses#create-a-commit-status
const docStatus = `{
  "url": "https://api.github.com/repos/octocat/Hello-World/statuses/6dcb09b5b57875f334f61aebed695e2e4193db5e",
  "avatar_url": "https://github.com/images/error/hubot_happy.gif",
  "id": 1,
  "node_id": "MDY6U3RhdHVzMQ==",
  "state": "success",
  "description": "Build has completed successfully",
  "target_url": "https://ci.example.com/1000/output",
  "context": "continuous-integration/jenkins",
  "created_at": "2012-07-20T01:19:13Z",
  "updated_at": "2012-07-20T01:19:13Z",
  "creator": ` + docUser + `
}`

// docIssueComment: "Create an issue comment", 201; one element of "List issue comments".
// https://docs.github.com/en/rest/issues/comments#create-an-issue-comment
// https://docs.github.com/en/rest/issues/comments#list-issue-comments
const docIssueComment = `{
  "id": 1,
  "node_id": "MDEyOklzc3VlQ29tbWVudDE=",
  "url": "https://api.github.com/repos/octocat/Hello-World/issues/comments/1",
  "html_url": "https://github.com/octocat/Hello-World/issues/1347#issuecomment-1",
  "body": "Me too",
  "user": ` + docUser + `,
  "created_at": "2011-04-14T16:00:49Z",
  "updated_at": "2011-04-14T16:00:49Z",
  "issue_url": "https://api.github.com/repos/octocat/Hello-World/issues/1347",
  "author_association": "COLLABORATOR"
}`

const docIssueCommentList = `[` + docIssueComment + `]`

// Webhook signature test values published by GitHub:
// https://docs.github.com/en/webhooks/using-webhooks/validating-webhook-deliveries#testing-the-webhook-payload-validation
const (
	docWebhookSecret    = "It's a Secret to Everybody"
	docWebhookPayload   = "Hello, World!"
	docWebhookSignature = "sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17"
)

// syncPayload is a pull_request delivery with action "synchronize", in the shape GitHub
// documents (https://docs.github.com/en/webhooks/webhook-events-and-payloads#pull_request:
// action, number, before, after, pull_request, repository, sender), with the documented
// octocat/Hello-World repository. The branch and SHAs are the test's own (%[1]s branch,
// %[2]s head repository full name, %[3]s before, %[4]s after).
const syncPayload = `{
  "action": "synchronize",
  "number": 1347,
  "before": "%[3]s",
  "after": "%[4]s",
  "pull_request": {
    "url": "https://api.github.com/repos/octocat/Hello-World/pulls/1347",
    "id": 1,
    "node_id": "MDExOlB1bGxSZXF1ZXN0MQ==",
    "html_url": "https://github.com/octocat/Hello-World/pull/1347",
    "number": 1347,
    "state": "open",
    "draft": true,
    "head": {
      "label": "octocat:%[1]s",
      "ref": "%[1]s",
      "sha": "%[4]s",
      "repo": {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "Hello-World", "full_name": "%[2]s"}
    },
    "base": {
      "label": "octocat:master",
      "ref": "master",
      "sha": "6dcb09b5b57875f334f61aebed695e2e4193db5e",
      "repo": {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "Hello-World", "full_name": "octocat/Hello-World"}
    }
  },
  "repository": {"id": 1296269, "node_id": "MDEwOlJlcG9zaXRvcnkxMjk2MjY5", "name": "Hello-World", "full_name": "octocat/Hello-World", "default_branch": "master"},
  "sender": ` + docUser + `
}`
