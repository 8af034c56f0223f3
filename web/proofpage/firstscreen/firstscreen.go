// Package firstscreen checks, in a real browser, what a reviewer sees first on a proof page:
// the verdict sentence, per viewport the base and implementation screenshots side by side,
// and every outline drawn exactly over the box the verifier measured, on the screen and in
// its pixels. The proof page's own browser tests and the prepared-run tests share it.
package firstscreen

import (
	"bytes"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math"
	"testing"

	"github.com/mxschmitt/playwright-go"
)

// Facts is the first screen as the browser lays it out.
type Facts struct {
	Sentence       string     `json:"sentence"`
	InnerHeight    float64    `json:"innerHeight"`
	SentenceBottom float64    `json:"sentenceBottom"`
	Viewports      []Viewport `json:"viewports"`
}

// Viewport is one viewport's pair on the first screen.
type Viewport struct {
	Viewport  string    `json:"viewport"`
	Criterion string    `json:"criterion"`
	Result    string    `json:"result"`
	Pictures  []Picture `json:"pictures"`
	NoBase    bool      `json:"noBase"`
	Trace     string    `json:"trace"` // the criterion's trace link
}

// Picture is one screenshot: where the image and its shown window are, and its outlines.
type Picture struct {
	Role          string  `json:"role"`
	Loaded        bool    `json:"loaded"`
	Top           float64 `json:"top"`
	Left          float64 `json:"left"`
	Width         float64 `json:"width"`
	Height        float64 `json:"height"`
	NaturalWidth  float64 `json:"naturalWidth"`
	NaturalHeight float64 `json:"naturalHeight"`
	WinTop        float64 `json:"winTop"`
	WinBottom     float64 `json:"winBottom"`
	Boxes         []Box   `json:"boxes"`
}

// Box is an outline: the measured box it was drawn for (document px) and where it is.
type Box struct {
	X, Y, W, H               float64
	Left, Top, Width, Height float64
}

const factsJS = `() => {
  const r = (el) => el.getBoundingClientRect();
  const s = document.querySelector('#verdict');
  return {
    sentence: s ? s.innerText.trim() : '',
    innerHeight: window.innerHeight,
    sentenceBottom: s ? r(s).bottom : -1,
    viewports: [...document.querySelectorAll('#pictures figure[data-lead]')].map((f) => {
      const tr = f.querySelector('a[data-criterion-trace]');
      return {
        viewport: f.dataset.viewport, criterion: f.dataset.criterion, result: f.dataset.result,
        noBase: !!f.querySelector('.noshot'), trace: tr ? tr.getAttribute('href') : '',
        pictures: [...f.querySelectorAll('figure.pic')].filter((p) => p.querySelector('img')).map((p) => {
          const img = p.querySelector('img');
          const win = p.querySelector('.win') || img;
          const ir = r(img), wr = r(win);
          return {role: p.dataset.role, loaded: img.complete && img.naturalWidth > 0,
            top: ir.top, left: ir.left, width: ir.width, height: ir.height,
            naturalWidth: img.naturalWidth, naturalHeight: img.naturalHeight, winTop: wr.top, winBottom: wr.bottom,
            boxes: [...p.querySelectorAll('.box')].map((b) => { const br = r(b); return {
              X: +b.dataset.x, Y: +b.dataset.y, W: +b.dataset.width, H: +b.dataset.height,
              Left: br.left, Top: br.top, Width: br.width, Height: br.height}; })};
        }),
      };
    }),
  };
}`

// Read waits until every image has loaded or failed, and reads the first screen.
func Read(page playwright.Page) (Facts, error) {
	var f Facts
	if _, err := page.WaitForFunction(`() => [...document.images].every((i) => i.complete)`, nil,
		playwright.PageWaitForFunctionOptions{Timeout: playwright.Float(20000)}); err != nil {
		return f, fmt.Errorf("images did not finish loading: %w", err)
	}
	raw, err := page.Evaluate(factsJS)
	if err != nil {
		return f, err
	}
	data, err := json.Marshal(raw)
	if err != nil {
		return f, err
	}
	return f, json.Unmarshal(data, &f)
}

// Check reads the first screen and checks what holds on every proof page: a verdict sentence
// on the screen; per viewport the implementation screenshot loaded, with the base one beside
// it on its left when there is one; with aboveFold, every picture's shown window on the
// screen; and every outline over its measured box, scaled with the picture, to a pixel. It
// returns the facts for the caller's own checks.
func Check(t testing.TB, page playwright.Page, aboveFold bool) Facts {
	t.Helper()
	f, err := Read(page)
	if err != nil {
		t.Fatal(err)
	}
	if f.Sentence == "" || f.SentenceBottom <= 0 || f.SentenceBottom > f.InnerHeight {
		t.Errorf("verdict sentence %q ends at %v, not on the first screen (%v px)", f.Sentence, f.SentenceBottom, f.InnerHeight)
	}
	if len(f.Viewports) == 0 {
		t.Fatal("the first screen shows no screenshots")
	}
	for _, vp := range f.Viewports {
		var base, impl *Picture
		for i := range vp.Pictures {
			p := &vp.Pictures[i]
			switch p.Role {
			case "base":
				base = p
			case "implementation":
				impl = p
			}
			if !p.Loaded {
				t.Errorf("%s %s picture not loaded", vp.Viewport, p.Role)
			}
			if aboveFold && (p.WinTop < 0 || p.WinBottom > f.InnerHeight) {
				t.Errorf("%s %s picture shown from %v to %v, not above the fold at %v", vp.Viewport, p.Role, p.WinTop, p.WinBottom, f.InnerHeight)
			}
			for _, b := range p.Boxes {
				sx, sy := p.Width/p.NaturalWidth, p.Height/p.NaturalHeight
				want := Box{Left: p.Left + b.X*sx, Top: p.Top + b.Y*sy, Width: b.W * sx, Height: b.H * sy}
				if d := offBy(b, want); d > 1 {
					t.Errorf("%s %s: outline at (%.1f, %.1f) %.1f×%.1f, the measured box is at (%.1f, %.1f) %.1f×%.1f on screen",
						vp.Viewport, p.Role, b.Left, b.Top, b.Width, b.Height, want.Left, want.Top, want.Width, want.Height)
				}
			}
		}
		if impl == nil {
			t.Errorf("%s: no implementation picture", vp.Viewport)
		}
		if base == nil && !vp.NoBase {
			t.Errorf("%s: neither a base picture nor a note saying why there is none", vp.Viewport)
		}
		if base != nil && impl != nil && (math.Abs(base.WinTop-impl.WinTop) > 1 || base.Left >= impl.Left) {
			t.Errorf("%s: base and implementation are not side by side", vp.Viewport)
		}
	}
	return f
}

// OutlineInPixels checks a page screenshot for an outline drawn around b: the share of points
// just outside its top and left edges that are the outline's red.
func OutlineInPixels(shot []byte, b Box) (red, samples int, err error) {
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil {
		return 0, 0, err
	}
	for x := b.Left + 4; x < b.Left+b.Width-4; x += 3 {
		samples++
		if isOutlineRed(img, x, b.Top-1.5) {
			red++
		}
	}
	for y := b.Top + 4; y < b.Top+b.Height-4; y += 3 {
		samples++
		if isOutlineRed(img, b.Left-1.5, y) {
			red++
		}
	}
	return red, samples, nil
}

func isOutlineRed(img image.Image, x, y float64) bool {
	r, g, b, _ := img.At(int(math.Round(x)), int(math.Round(y))).RGBA()
	return r>>8 > 170 && g>>8 < 60 && b>>8 < 60
}

func offBy(a, b Box) float64 {
	return math.Max(math.Max(math.Abs(a.Left-b.Left), math.Abs(a.Top-b.Top)), math.Max(math.Abs(a.Width-b.Width), math.Abs(a.Height-b.Height)))
}
