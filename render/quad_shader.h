// The vertex shader of a textured quad placed by a `quad` uniform (the NDC of the outer corners
// of pixel (0, 0) and of the last pixel), shared by the slice and the composite programs.
#pragma once

namespace stacklens::render {

inline constexpr const char* kQuadVertexShader = R"(#version 330 core
uniform vec4 quad;  // NDC of the outer corners of pixel (0, 0) and pixel (w-1, h-1)
out vec2 uv;
void main() {
  vec2 corners[4] = vec2[](vec2(0, 0), vec2(1, 0), vec2(0, 1), vec2(1, 1));
  uv = corners[gl_VertexID];
  gl_Position = vec4(mix(quad.xy, quad.zw, uv), 0.0, 1.0);
})";

}  // namespace stacklens::render
