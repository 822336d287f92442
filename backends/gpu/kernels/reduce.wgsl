// Reduction of x over the "reduced" dims, one output per combination of the "kept" dims.
// Variant WGRED: a workgroup per output (strided partial results, then a tree in shared memory);
// otherwise a thread per output. Acc carries a value and, for arg-reductions, its index.
alias T = ${T};
alias A = ${A};
alias O = ${O};
struct Acc { v: A, i: i32 };
fn load(j: i32) -> A { return ${LOAD}; }
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
        let o = flat_group(wid, nwg);
        if (o >= nout) { return; }
        let base = kept_offset(o);
        var acc = Acc(${INIT}, 0);
        for (var r = lid; r < r_n; r += WG) {
            acc = comb(acc, Acc(load(base + red_offset(r)), i32(r)));
        }
        sh[lid] = acc;
        workgroupBarrier();
        for (var s = WG / 2u; s > 0u; s = s >> 1u) {
            if (lid < s) { sh[lid] = comb(sh[lid], sh[lid + s]); }
            workgroupBarrier();
        }
        if (lid == 0u) { out[o] = O(${FINAL}); }
    } else {
        let o = flat_group(wid, nwg) * WG + lid;
        if (o >= nout) { return; }
        let base = kept_offset(o);
        var acc = Acc(${INIT}, 0);
        for (var r = 0u; r < r_n; r++) {
            acc = comb(acc, Acc(load(base + red_offset(r)), i32(r)));
        }
        out[o] = O(${FINAL});
    }
}
