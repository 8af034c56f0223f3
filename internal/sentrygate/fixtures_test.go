package sentrygate_test

// Recorded responses of Sentry's events endpoint, GET /api/0/organizations/{org}/events/,
// documented at https://docs.sentry.io/api/discover/query-discover-events-in-table-format/
// (the docs' example is generated from getsentry/sentry
// src/sentry/apidocs/examples/discover_performance_examples.py, QUERY_DISCOVER_EVENTS).
// The response is {"data": [rows keyed by the requested field names], "meta": {"fields":
// {field: type}}}.

// docQueryEvents is the documentation's example response, verbatim. The gate must read any
// row of the documented shape as an event, even one without the fields it asked for.
const docQueryEvents = `{
  "data": [
    {
      "count_if(transaction.duration,greater,300)": 5,
      "count()": 10,
      "equation|count_if(transaction.duration,greater,300) / count() * 100": 50,
      "transaction": "foo"
    },
    {
      "count_if(transaction.duration,greater,300)": 3,
      "count()": 20,
      "equation|count_if(transaction.duration,greater,300) / count() * 100": 15,
      "transaction": "bar"
    },
    {
      "count_if(transaction.duration,greater,300)": 8,
      "count()": 40,
      "equation|count_if(transaction.duration,greater,300) / count() * 100": 20,
      "transaction": "baz"
    }
  ],
  "meta": {
    "fields": {
      "count_if(transaction.duration,greater,300)": "integer",
      "count()": "integer",
      "equation|count_if(transaction.duration,greater,300) / count() * 100": "number",
      "transaction": "string"
    }
  }
}`

// errorEvents is the documented shape with the fields the gate requests (id, title, level,
// timestamp, release, environment are event properties listed on the same page); the
// values are the test's own.
const errorEvents = `{
  "data": [
    {
      "id": "9999aaaaca8b46d797c23c6077c6ff01",
      "title": "TypeError: Cannot read properties of undefined (reading 'price')",
      "level": "error",
      "timestamp": "2025-01-01T12:00:03+00:00",
      "release": "signoff-c-watchlist-2",
      "environment": "preview-c-watchlist"
    },
    {
      "id": "8888bbbbca8b46d797c23c6077c6ff02",
      "title": "ChunkLoadError: Loading chunk 7 failed",
      "level": "fatal",
      "timestamp": "2025-01-01T12:00:04+00:00",
      "release": "signoff-c-watchlist-2",
      "environment": "preview-c-watchlist"
    }
  ],
  "meta": {
    "fields": {
      "id": "string",
      "title": "string",
      "level": "string",
      "timestamp": "date",
      "release": "string",
      "environment": "string"
    }
  }
}`

// noEvents is the documented shape with no rows.
const noEvents = `{
  "data": [],
  "meta": {
    "fields": {
      "id": "string",
      "title": "string",
      "level": "string",
      "timestamp": "date",
      "release": "string",
      "environment": "string"
    }
  }
}`

// docError is the test's own 401 body, in the {"detail": ...} error shape of Sentry's API.
const docError = `{"detail": "Invalid token"}`
