package verify

import (
	"image"
	"image/color"
	"testing"
)

// Texts sharing a screenshot are each cut out at the pixels wholly inside their own region,
// at any device scale: a pixel half inside the region (a neighbour's border, anti-aliased)
// is not the text's ink.
func TestInkCutsEachTextOutOfTheSharedScreenshot(t *testing.T) {
	a := cssBox{x: 12.5, y: 21, w: 10.2, h: 5}
	b := cssBox{x: 40, y: 30.4, w: 20, h: 10}
	u := around(around(cssBox{}, a, true), b, false)
	if u != (cssBox{x: 12, y: 21, w: 48, h: 20}) {
		t.Fatalf("box around both = %+v", u)
	}
	// Relative to the box around both, a spans x 0.5..10.7 and y 0..5, b x 28..48 and y
	// 9.4..19.4: at each scale, the first whole pixel and the last one wholly inside.
	for _, c := range []struct {
		scale int
		a, b  image.Rectangle
	}{
		{1, image.Rect(1, 0, 10, 5), image.Rect(28, 10, 48, 19)},
		{2, image.Rect(1, 0, 21, 10), image.Rect(56, 19, 96, 38)},
		{3, image.Rect(2, 0, 32, 15), image.Rect(84, 29, 144, 58)},
	} {
		img := image.NewGray(image.Rect(0, 0, int(u.w)*c.scale, int(u.h)*c.scale))
		if got := cut(img, u, a).Bounds(); got != c.a {
			t.Errorf("scale %d: a cut at %v, want %v", c.scale, got, c.a)
		}
		if got := cut(img, u, b).Bounds(); got != c.b {
			t.Errorf("scale %d: b cut at %v, want %v", c.scale, got, c.b)
		}
	}
	// A region thinner than a pixel still gets the pixel it lies on.
	img := image.NewGray(image.Rect(0, 0, 48, 20))
	if got := cut(img, u, cssBox{x: 30.2, y: 25, w: 0.5, h: 3}).Bounds(); got != image.Rect(18, 4, 19, 7) {
		t.Errorf("thin region cut at %v", got)
	}
}

// The cut-out, not the whole screenshot, decides: a text painted in its background's colour
// beside a text that is readable has no ink of its own.
func TestInkOfAHiddenTextBesideAShownOne(t *testing.T) {
	u := cssBox{x: 0, y: 0, w: 40, h: 10}
	img := image.NewGray(image.Rect(0, 0, 40, 10))
	for y := 0; y < 10; y++ {
		for x := 0; x < 40; x++ {
			v := uint8(255)
			if x < 20 && (x+y)%3 == 0 { // glyph strokes in the left half only
				v = 0
			}
			img.SetGray(x, y, color.Gray{Y: v})
		}
	}
	shown := inkContrast(cut(img, u, cssBox{x: 0, y: 0, w: 20, h: 10}))
	hidden := inkContrast(cut(img, u, cssBox{x: 20, y: 0, w: 20, h: 10}))
	if shown < minInkContrast || hidden >= minInkContrast {
		t.Fatalf("ink contrast: shown text %.2f, hidden text %.2f (threshold %.2f)", shown, hidden, minInkContrast)
	}
	if whole := inkContrast(img); whole < minInkContrast {
		t.Fatalf("the whole screenshot has contrast %.2f", whole)
	}
}
