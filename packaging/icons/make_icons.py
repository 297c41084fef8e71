#!/usr/bin/python3
# Draws StackLens's application icon: three slices of a stack (viridis colours) under a lens.
# Writes stacklens.svg and stacklens-N.png for the sizes freedesktop's hicolor theme lists, from
# one set of shapes, so that the scalable and the fixed sizes agree. The outputs are committed;
# run again after changing the shapes: /usr/bin/python3 packaging/icons/make_icons.py
import os

from PIL import Image, ImageDraw

HERE = os.path.dirname(os.path.abspath(__file__))
SIZES = [16, 22, 24, 32, 48, 64, 128, 256, 512]
UNIT = 256  # the shapes' coordinate system
BACKGROUND = ("#1d2a4d", 48)  # colour and corner radius of the rounded square

# Slices from the bottom up: the stack seen from above, each a parallelogram (x, y of its four
# corners), filled with viridis at 0, 0.5 and 1.
def slice_at(y):
    return [(40, y + 30), (150, y), (216, y + 30), (106, y + 60)]


SLICES = [(slice_at(150), "#440154"), (slice_at(110), "#21918c"), (slice_at(70), "#fde725")]
OUTLINE = "#ffffff"
LENS = ((168, 152), 50, 14)  # centre, radius, rim width
HANDLE = ((203, 187), (226, 210), 22)  # from, to, width


def svg():
    colour, radius = BACKGROUND
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{UNIT}" height="{UNIT}" '
             f'viewBox="0 0 {UNIT} {UNIT}">',
             f'<rect x="8" y="8" width="240" height="240" rx="{radius}" fill="{colour}"/>']
    for points, fill in SLICES:
        p = " ".join(f"{x},{y}" for x, y in points)
        parts.append(f'<polygon points="{p}" fill="{fill}" stroke="{OUTLINE}" '
                     f'stroke-width="4" stroke-linejoin="round"/>')
    (cx, cy), r, w = LENS
    (x0, y0), (x1, y1), hw = HANDLE
    parts.append(f'<line x1="{x0}" y1="{y0}" x2="{x1}" y2="{y1}" stroke="{OUTLINE}" '
                 f'stroke-width="{hw}" stroke-linecap="round"/>')
    parts.append(f'<circle cx="{cx}" cy="{cy}" r="{r}" fill="#ffffff" fill-opacity="0.25" '
                 f'stroke="{OUTLINE}" stroke-width="{w}"/>')
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def png(size):
    # Drawn 8 times larger and reduced: PIL's shapes have no anti-aliasing of their own.
    scale = size * 8 / UNIT
    big = Image.new("RGBA", (size * 8, size * 8), (0, 0, 0, 0))
    draw = ImageDraw.Draw(big)
    s = lambda v: v * scale
    colour, radius = BACKGROUND
    draw.rounded_rectangle([s(8), s(8), s(248), s(248)], radius=s(radius), fill=colour)
    for points, fill in SLICES:
        draw.polygon([(s(x), s(y)) for x, y in points], fill=fill, outline=OUTLINE,
                     width=max(1, round(s(4))))
    (x0, y0), (x1, y1), hw = HANDLE
    draw.line([s(x0), s(y0), s(x1), s(y1)], fill=OUTLINE, width=round(s(hw)))
    for (x, y) in ((x0, y0), (x1, y1)):
        draw.ellipse([s(x - hw / 2), s(y - hw / 2), s(x + hw / 2), s(y + hw / 2)], fill=OUTLINE)
    (cx, cy), r, w = LENS
    glass = Image.new("RGBA", big.size, (0, 0, 0, 0))
    ImageDraw.Draw(glass).ellipse([s(cx - r), s(cy - r), s(cx + r), s(cy + r)],
                                  fill=(255, 255, 255, 64))
    big = Image.alpha_composite(big, glass)
    ImageDraw.Draw(big).ellipse([s(cx - r - w / 2), s(cy - r - w / 2), s(cx + r + w / 2),
                                 s(cy + r + w / 2)], outline=OUTLINE, width=round(s(w)))
    return big.resize((size, size), Image.LANCZOS)


if __name__ == "__main__":
    with open(os.path.join(HERE, "stacklens.svg"), "w") as f:
        f.write(svg())
    for size in SIZES:
        # No timestamps or text chunks: the same shapes give the same bytes.
        png(size).save(os.path.join(HERE, f"stacklens-{size}.png"), optimize=True)
