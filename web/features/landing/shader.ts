/**
 * The landing's shader (GLSL ES 3.00, WebGL2): a digital rain of procedural 5×7 glyphs over a dark
 * terminal, drawn pixel-exact at half resolution. Preview: dim rain and a sweeping scan beam around a
 * pulsing core. Entry: a ring bursts out from the centre while the rain brightens. Colour modes wipe
 * in as a ring from the centre (uTransform); mode 0 is black and white, and its 800 ms glitch tears
 * horizontal slices and inverts blocks.
 */

export const VERTEX_SHADER = `#version 300 es
// One triangle that covers the screen; no vertex buffer needed.
void main() {
  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2));
  gl_Position = vec4(p * 2.0 - 1.0, 0.0, 1.0);
}
`;

export const FRAGMENT_SHADER = `#version 300 es
precision highp float;
uniform vec2 uRes;
uniform float uTime;
uniform float uEntry;
uniform float uTransform;
uniform int uMode;
uniform int uPrevMode;
uniform float uGlitch;
uniform float uCell;
out vec4 outColor;

float hash(vec2 p) {
  p = fract(p * vec2(123.34, 456.21));
  p += dot(p, p + 45.32);
  return fract(p.x * p.y);
}

// A lit bit of a 5x7 glyph at pixel q of a cell, the glyph chosen by seed.
float glyph(vec2 q, float seed) {
  vec2 b = q - vec2(2.0, 1.0);
  if (b.x < 0.0 || b.y < 0.0 || b.x > 4.0 || b.y > 6.0) return 0.0;
  // Mirror left/right so the random bits read as characters rather than noise.
  vec2 m = vec2(min(b.x, 4.0 - b.x), b.y);
  return step(0.48, hash(m + seed * 7.13));
}

vec3 palette(int mode, float v, float head, vec2 uv) {
  if (mode == 0) return vec3(v + head);                                   // black and white
  if (mode == 1) return vec3(0.0, 1.0, 0.61) * v + vec3(0.75, 1.0, 0.9) * head; // phosphor green
  if (mode == 2) return mix(vec3(0.0, 0.85, 1.0), vec3(0.35, 0.3, 1.0), uv.y) * v + vec3(0.85, 0.95, 1.0) * head;
  return mix(vec3(1.0, 0.3, 0.43), vec3(1.0, 0.82, 0.4), uv.y) * v + vec3(1.0, 0.95, 0.85) * head; // amber / red
}

void main() {
  vec2 fc = floor(gl_FragCoord.xy);
  // Glitch: tear horizontal slices sideways.
  float band = floor(fc.y / 6.0);
  float tick = floor(uTime * 24.0);
  float tear = hash(vec2(band, tick));
  if (uGlitch > 0.0 && tear > 0.78) fc.x = mod(fc.x + floor((tear - 0.78) * uRes.x * 1.5), uRes.x);

  vec2 uv = fc / uRes;
  vec2 cell = floor(fc / uCell);
  vec2 q = fc - cell * uCell;
  float rows = ceil(uRes.y / uCell);

  // Digital rain: each column has its own speed and phase; the trail fades behind the head.
  float speed = 3.0 + 9.0 * hash(vec2(cell.x, 1.7));
  float span = rows + 24.0;
  float head = mod(uTime * speed + hash(vec2(cell.x, 9.1)) * span, span);
  float fromTop = rows - 1.0 - cell.y;
  float d = head - fromTop;
  float trail = d >= 0.0 ? exp(-d * mix(0.22, 0.12, uEntry)) : 0.0;
  float flicker = floor(uTime * (0.5 + 4.0 * hash(cell)));
  float g = glyph(q, hash(cell + flicker * 0.37) * 97.0);
  float isHead = step(0.0, d) * step(d, 0.99);
  // A faint static layer so the screen never goes fully empty.
  float dust = 0.06 * glyph(q, hash(cell * 1.31) * 53.0) * step(0.93, hash(cell + 3.3));

  vec2 c = (gl_FragCoord.xy - 0.5 * uRes) / uRes.y;
  float r = length(c);
  float bright = mix(0.32, 1.0, uEntry);
  float v = g * trail * bright + dust;
  float hv = g * isHead * mix(0.5, 1.0, uEntry);

  // Preview: a pulsing core and a scan beam sweeping down the screen.
  float pre = 1.0 - uEntry;
  float core = exp(-r * 9.0) * (0.55 + 0.45 * sin(uTime * 2.2)) * pre;
  float beam = exp(-abs(uv.y - (1.0 - fract(uTime * 0.18))) * 90.0) * 0.35 * pre;
  // Entry: a ring bursts from the centre.
  float ringR = uEntry * 1.4;
  float ring = exp(-abs(r - ringR) * 60.0) * sin(3.14159 * uEntry) * 1.4;
  v += core + beam + ring;

  // Colour transform: the new mode wipes in as a ring from the centre.
  float wipeR = uTransform * 1.3;
  float inside = 1.0 - smoothstep(wipeR - 0.04, wipeR, r);
  vec3 col = mix(palette(uPrevMode, v, hv, uv), palette(uMode, v, hv, uv), uTransform >= 1.0 ? 1.0 : inside);
  col += palette(uMode, 1.0, 0.0, uv) * exp(-abs(r - wipeR) * 80.0) * (1.0 - uTransform) * 0.8;

  // Glitch: inverted blocks.
  if (uGlitch > 0.0 && hash(floor(fc / vec2(48.0, 10.0)) + tick) > 0.93) col = vec3(1.0) - col;

  // Scanlines and vignette.
  col *= 0.82 + 0.18 * mod(fc.y, 2.0);
  col *= smoothstep(1.25, 0.25, r);
  outColor = vec4(clamp(col, 0.0, 1.0), 1.0);
}
`;
