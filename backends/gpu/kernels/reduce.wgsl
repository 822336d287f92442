// Reduction of x over the "reduced" dims, one result per combination of the "kept" dims.
// Acc carries a value and, for arg-reductions, its index (INDEX: the position r in the run, or
// for a later pass the index an earlier pass found, read from idx). LOAD may read a per-output
// input at o_at, the output being reduced (a sum of exp(x - shift[o]): reduce.py's sum_exp).
// Variant WGRED: workgroup w reduces chunk g = w % G of output o = w / G, at most CHUNK = WG * STEPS
// elements (strided partial results, then a tree in shared memory); a run longer than CHUNK takes
// G > 1 chunks, and reduce.py reduces the G partial results in a further pass.
// Otherwise a thread per output (runs shorter than reduce.py's WG_THRESHOLD, G == 1).
// Loop bounds, per invocation (some implementations stop a shader's loops after 65535 iterations
// in all, e.g. Mesa's lavapipe): kept_offset KR, red_offset RR per call (ranks: KR + RR <= 30, the
// uniform block's limit), the chunk loop STEPS (with RR each), the tree log2(WG) = 8; the thread per
// output loop WG_THRESHOLD (with RR each; 1024 on a software adapter). At most 1024 * 31 + 30 < 31800 in all.
alias T = ${T};
alias A = ${A};
alias O = ${O};
struct Acc { v: A, i: i32 };
${HELPERS}
var<private> o_at: u32;
fn load(j: i32) -> A { return ${LOAD}; }
fn at(j: i32, r: u32) -> Acc { return Acc(load(j), ${INDEX}); }
fn comb(a: Acc, b: Acc) -> Acc { ${COMB} }
fn kept_offset(o: u32) -> i32 {
    var rem = o;
    var off = 0;
    for (var d = ${KR} - 1; d >= 0; d--) {
        let sz = ui(U_kshape + u32(d));
        off += i32(rem % sz) * ii(U_kstride + u32(d));
        rem = rem / sz;
    }
    return off;
}
fn red_offset(r: u32) -> i32 {
    var rem = r;
    var off = 0;
    for (var d = ${RR} - 1; d >= 0; d--) {
        let sz = ui(U_rshape + u32(d));
        off += i32(rem % sz) * ii(U_rstride + u32(d));
        rem = rem / sz;
    }
    return off;
}
var<workgroup> sh: array<Acc, WG>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) lid: u32) {
    let nout = ui(U_nout);
    let r_n = ui(U_r);
    if (${WGRED}) {
        let chunks = ui(U_chunks);
        let w = flat_group(wid, nwg);
        if (w >= nout * chunks) { return; }
        o_at = w / chunks;
        let base = kept_offset(o_at);
        let lo = (w % chunks) * ${CHUNK}u;
        let hi = min(r_n, lo + ${CHUNK}u);
        var acc = ${INIT};
        for (var r = lo + lid; r < hi; r += WG) {            // at most STEPS = CHUNK / WG times
            acc = comb(acc, at(base + red_offset(r), r));
        }
        sh[lid] = acc;
        workgroupBarrier();
        for (var s = WG / 2u; s > 0u; s = s >> 1u) {         // log2(WG) times
            if (lid < s) { sh[lid] = comb(sh[lid], sh[lid + s]); }
            workgroupBarrier();
        }
        if (lid == 0u) {
            let acc = sh[0];
${STORE}
        }
    } else {
        let w = flat_group(wid, nwg) * WG + lid;
        if (w >= nout) { return; }
        o_at = w;
        let base = kept_offset(w);
        let lo = 0u;
        var acc = ${INIT};
        for (var r = 0u; r < r_n; r++) {                     // r_n < WG_THRESHOLD: at most 1023 times
            acc = comb(acc, at(base + red_offset(r), r));
        }
${STORE}
    }
}
