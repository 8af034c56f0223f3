package authoring

import (
	"testing"

	"github.com/signoff/signoff/authoring/internal/authoringtest"
)

func TestMain(m *testing.M) { authoringtest.Main(m) }
