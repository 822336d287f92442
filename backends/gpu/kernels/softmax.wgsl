// The Softmax family along one axis of x viewed as [outer, n, inner]: a row is the n elements
// (o, k, i) for k < n, at (o * n + k) * inner + i. ROW and LANE (a workgroup per row: the workgroup
// and the thread's index in it; a thread per row: the thread and 0) and LANES (threads per row)
// come from the launcher, as do the row's statistics (MAX: whether the max is needed; TERM, the
// summand at element j given the max m) and VALUE, the output at j given m and the sum s.
// SoftmaxGrad and LogSoftmaxGrad read dy from in0 and y from in1.
${REDUCE}
const LANES: u32 = ${LANES};
fn term(j: u32, m: f32) -> f32 { return ${TERM}; }
fn value(j: u32, m: f32, s: f32) -> f32 { return ${VALUE}; }

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let r = ${ROW};
    if (r >= ui(U_rows)) { return; }
    let lane = ${LANE};
    let n = ui(U_n);
    let inner = ui(U_inner);
    let base = (r / inner) * n * inner + r % inner;
    var m = 0.0;
    if (${MAX}) {
        var v = -3.4028234663852886e38;
        for (var k = lane; k < n; k += LANES) { v = max(v, in0[base + k * inner]); } // ROW_STEPS times at most
        m = row_max(v, lid);
    }
    var t = 0.0;
    for (var k = lane; k < n; k += LANES) { t += term(base + k * inner, m); } // ROW_STEPS times at most
    let s = row_sum(t, lid);
    for (var k = lane; k < n; k += LANES) { // ROW_STEPS times at most
        let j = base + k * inner;
        out[j] = value(j, m, s);
    }
}
