// Elementwise map: out[i] = EXPR(x0, x1, ...) over n items (vec4 items in the vec4 variant).
// Inputs are read whole ("full"), as a splat ("scalar"), or through offset + strides over the
// output shape ("strided": broadcasting, transposes, slices). Generated per variant:
// T0..Tk input types, O output type, F the matching float type, ARGS, LOADS, HELPERS, EXPR
// (a float16 input is read into f32, and a float16 output stored through STORE, half_: see half.py).
${ALIASES}
${HELPERS}
fn compute(${ARGS}) -> O {
    let p0 = uf(U_p);
    let p1 = uf(U_p + 1u);
    let q0 = ii(U_q);
    let q1 = ii(U_q + 1u);
    let q2 = ii(U_q + 2u);
    let q3 = ii(U_q + 3u);
    return ${EXPR};
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let i = flat_group(wid, nwg) * WG + lid;
    if (i >= ui(U_n)) { return; }
${LOADS}
    out[i] = ${STORE}(compute(${CALL}));
}
