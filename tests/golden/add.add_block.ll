; ModuleID = 'pto_kernel_add_block'
source_filename = "pto_kernel_add_block"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%pto_core_ctx = type { i32, i32, ptr, i64, [2 x i64], ptr, i32, i32, i32, i32 }
%pto_kernel_tensor = type { ptr, [5 x i64], [5 x i64], i32, i32 }

; Function Attrs: nounwind
define i32 @pto_kernel_add_block(ptr noalias nocapture readonly %tensors, ptr noalias nocapture readonly %scalars, ptr noalias nocapture %ctx) #0 {
entry:
  %0 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 9
  %flags = load i32, ptr %0, align 4
  %1 = and i32 %flags, 1
  %stream_stores = icmp ne i32 %1, 0
  %divzero = alloca i8, align 1
  store i8 0, ptr %divzero, align 1
  %2 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 3
  %scratch_size = load i64, ptr %2, align 8
  %3 = icmp ult i64 %scratch_size, 32768
  br i1 %3, label %fail, label %ok

fail:                                             ; preds = %entry
  %err_detail = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 32768, ptr %err_detail, align 8
  %4 = getelementptr inbounds i64, ptr %err_detail, i64 1
  store i64 %scratch_size, ptr %4, align 8
  ret i32 3

ok:                                               ; preds = %entry
  %5 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 2
  %scratch = load ptr, ptr %5, align 8, !nonnull !0, !align !1
  %buf0 = getelementptr inbounds i8, ptr %scratch, i64 0
  %buf1 = getelementptr inbounds i8, ptr %scratch, i64 16384
  %6 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 0
  %7 = getelementptr inbounds %pto_kernel_tensor, ptr %6, i32 0, i32 0
  %a.data = load ptr, ptr %7, align 8
  %8 = getelementptr inbounds %pto_kernel_tensor, ptr %6, i32 0, i32 2, i32 0
  %a.stride0 = load i64, ptr %8, align 8
  %9 = getelementptr inbounds %pto_kernel_tensor, ptr %6, i32 0, i32 1, i32 0
  %a.dim0 = load i64, ptr %9, align 8
  %10 = getelementptr inbounds %pto_kernel_tensor, ptr %6, i32 0, i32 2, i32 1
  %a.stride1 = load i64, ptr %10, align 8
  %11 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 1
  %12 = getelementptr inbounds %pto_kernel_tensor, ptr %11, i32 0, i32 0
  %b.data = load ptr, ptr %12, align 8
  %13 = getelementptr inbounds %pto_kernel_tensor, ptr %11, i32 0, i32 2, i32 0
  %b.stride0 = load i64, ptr %13, align 8
  %14 = getelementptr inbounds %pto_kernel_tensor, ptr %11, i32 0, i32 1, i32 0
  %b.dim0 = load i64, ptr %14, align 8
  %15 = icmp ne i64 %a.dim0, %b.dim0
  br i1 %15, label %fail1, label %ok2

fail1:                                            ; preds = %ok
  %err_detail3 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 %a.dim0, ptr %err_detail3, align 8
  %16 = getelementptr inbounds i64, ptr %err_detail3, i64 1
  store i64 %b.dim0, ptr %16, align 8
  ret i32 2

ok2:                                              ; preds = %ok
  %17 = getelementptr inbounds %pto_kernel_tensor, ptr %11, i32 0, i32 2, i32 1
  %b.stride1 = load i64, ptr %17, align 8
  %18 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 2
  %19 = getelementptr inbounds %pto_kernel_tensor, ptr %18, i32 0, i32 0
  %c.data = load ptr, ptr %19, align 8
  %20 = getelementptr inbounds %pto_kernel_tensor, ptr %18, i32 0, i32 2, i32 0
  %c.stride0 = load i64, ptr %20, align 8
  %21 = getelementptr inbounds %pto_kernel_tensor, ptr %18, i32 0, i32 1, i32 0
  %c.dim0 = load i64, ptr %21, align 8
  %22 = icmp ne i64 %a.dim0, %c.dim0
  br i1 %22, label %fail4, label %ok5

fail4:                                            ; preds = %ok2
  %err_detail6 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 %a.dim0, ptr %err_detail6, align 8
  %23 = getelementptr inbounds i64, ptr %err_detail6, i64 1
  store i64 %c.dim0, ptr %23, align 8
  ret i32 2

ok5:                                              ; preds = %ok2
  %24 = getelementptr inbounds %pto_kernel_tensor, ptr %18, i32 0, i32 2, i32 1
  %c.stride1 = load i64, ptr %24, align 8
  %25 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %26 = call i64 @llvm.smax.i64(i64 %25, i64 0)
  %27 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %28 = call i64 @llvm.smax.i64(i64 %27, i64 0)
  %29 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %30 = call i64 @llvm.smax.i64(i64 %29, i64 0)
  %31 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %32 = call i64 @llvm.smax.i64(i64 %31, i64 0)
  %33 = mul i64 0, %a.stride0
  %34 = add i64 0, %33
  %35 = mul i64 0, %a.stride1
  %36 = add i64 %34, %35
  %37 = sub i64 %a.dim0, 0
  %38 = call i64 @llvm.smin.i64(i64 %26, i64 %37)
  %39 = call i64 @llvm.smin.i64(i64 %38, i64 32)
  %40 = call i64 @llvm.smax.i64(i64 %39, i64 0)
  %41 = call i64 @llvm.smin.i64(i64 %28, i64 128)
  %42 = call i64 @llvm.smin.i64(i64 %41, i64 128)
  %43 = call i64 @llvm.smax.i64(i64 %42, i64 0)
  %nr = select i1 true, i64 %40, i64 0
  %nc = select i1 true, i64 %43, i64 0
  %win = getelementptr float, ptr %a.data, i64 %36
  %44 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %45 = call i64 @llvm.smax.i64(i64 %44, i64 0)
  %46 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %47 = call i64 @llvm.smax.i64(i64 %46, i64 0)
  %48 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %49 = call i64 @llvm.smax.i64(i64 %48, i64 0)
  %50 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %51 = call i64 @llvm.smax.i64(i64 %50, i64 0)
  %52 = mul i64 0, %b.stride0
  %53 = add i64 0, %52
  %54 = mul i64 0, %b.stride1
  %55 = add i64 %53, %54
  %56 = sub i64 %b.dim0, 0
  %57 = call i64 @llvm.smin.i64(i64 %45, i64 %56)
  %58 = call i64 @llvm.smin.i64(i64 %57, i64 32)
  %59 = call i64 @llvm.smax.i64(i64 %58, i64 0)
  %60 = call i64 @llvm.smin.i64(i64 %47, i64 128)
  %61 = call i64 @llvm.smin.i64(i64 %60, i64 128)
  %62 = call i64 @llvm.smax.i64(i64 %61, i64 0)
  %nr7 = select i1 true, i64 %59, i64 0
  %nc8 = select i1 true, i64 %62, i64 0
  %win9 = getelementptr float, ptr %b.data, i64 %55
  %63 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %64 = call i64 @llvm.smax.i64(i64 %63, i64 0)
  %65 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %66 = call i64 @llvm.smax.i64(i64 %65, i64 0)
  %67 = mul i64 0, %c.stride0
  %68 = add i64 0, %67
  %69 = mul i64 0, %c.stride1
  %70 = add i64 %68, %69
  %71 = sub i64 %c.dim0, 0
  %72 = call i64 @llvm.smin.i64(i64 %64, i64 %71)
  %73 = call i64 @llvm.smin.i64(i64 %72, i64 32)
  %74 = call i64 @llvm.smax.i64(i64 %73, i64 0)
  %75 = call i64 @llvm.smin.i64(i64 %66, i64 128)
  %76 = call i64 @llvm.smin.i64(i64 %75, i64 128)
  %77 = call i64 @llvm.smax.i64(i64 %76, i64 0)
  %nr10 = select i1 true, i64 %74, i64 0
  %nc11 = select i1 true, i64 %77, i64 0
  %win12 = getelementptr float, ptr %c.data, i64 %70
  %78 = icmp sge i64 %c.stride0, 0
  %79 = icmp eq i64 %c.stride1, 1
  %80 = and i1 %79, %78
  %81 = sub i64 %nr10, 1
  %82 = mul i64 %81, %c.stride0
  %83 = add i64 %82, %nc11
  %84 = icmp eq i64 %nc11, 0
  %85 = icmp eq i64 %nr10, 0
  %86 = or i1 %85, %84
  %87 = select i1 %86, i64 0, i64 %83
  %88 = ptrtoint ptr %win12 to i64
  %89 = mul i64 %87, 4
  %90 = add i64 %88, %89
  %91 = icmp eq i64 %a.stride1, 1
  %92 = and i1 %80, %91
  %93 = icmp sge i64 %a.stride0, 0
  %94 = and i1 %92, %93
  %95 = icmp sge i64 %nr, %nr10
  %96 = and i1 %94, %95
  %97 = icmp sge i64 %nc, %nc11
  %98 = and i1 %96, %97
  %99 = sub i64 %nr10, 1
  %100 = mul i64 %99, %a.stride0
  %101 = add i64 %100, %nc11
  %102 = icmp eq i64 %nc11, 0
  %103 = icmp eq i64 %nr10, 0
  %104 = or i1 %103, %102
  %105 = select i1 %104, i64 0, i64 %101
  %106 = ptrtoint ptr %win to i64
  %107 = mul i64 %105, 4
  %108 = add i64 %106, %107
  %109 = icmp ule i64 %90, %106
  %110 = icmp ule i64 %108, %88
  %111 = or i1 %110, %109
  %112 = and i1 %98, %111
  %113 = icmp eq i64 %b.stride1, 1
  %114 = and i1 %112, %113
  %115 = icmp sge i64 %b.stride0, 0
  %116 = and i1 %114, %115
  %117 = icmp sge i64 %nr7, %nr10
  %118 = and i1 %116, %117
  %119 = icmp sge i64 %nc8, %nc11
  %120 = and i1 %118, %119
  %121 = sub i64 %nr10, 1
  %122 = mul i64 %121, %b.stride0
  %123 = add i64 %122, %nc11
  %124 = icmp eq i64 %nc11, 0
  %125 = icmp eq i64 %nr10, 0
  %126 = or i1 %125, %124
  %127 = select i1 %126, i64 0, i64 %123
  %128 = ptrtoint ptr %win9 to i64
  %129 = mul i64 %127, 4
  %130 = add i64 %128, %129
  %131 = icmp ule i64 %90, %128
  %132 = icmp ule i64 %130, %88
  %133 = or i1 %132, %131
  %134 = and i1 %120, %133
  br i1 %134, label %stream, label %stream.buffered

stream:                                           ; preds = %ok5
  br i1 %stream_stores, label %stream.nt, label %stream.cached

stream.buffered:                                  ; preds = %ok5
  %135 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %136 = call i64 @llvm.smax.i64(i64 %135, i64 0)
  %137 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %138 = call i64 @llvm.smax.i64(i64 %137, i64 0)
  %139 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %140 = call i64 @llvm.smax.i64(i64 %139, i64 0)
  %141 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %142 = call i64 @llvm.smax.i64(i64 %141, i64 0)
  %143 = mul i64 0, %a.stride0
  %144 = add i64 0, %143
  %145 = mul i64 0, %a.stride1
  %146 = add i64 %144, %145
  %147 = sub i64 %a.dim0, 0
  %148 = call i64 @llvm.smin.i64(i64 %136, i64 %147)
  %149 = call i64 @llvm.smin.i64(i64 %148, i64 32)
  %150 = call i64 @llvm.smax.i64(i64 %149, i64 0)
  %151 = call i64 @llvm.smin.i64(i64 %138, i64 128)
  %152 = call i64 @llvm.smin.i64(i64 %151, i64 128)
  %153 = call i64 @llvm.smax.i64(i64 %152, i64 0)
  %nr17 = select i1 true, i64 %150, i64 0
  %nc18 = select i1 true, i64 %153, i64 0
  %win19 = getelementptr float, ptr %a.data, i64 %146
  %unit = icmp eq i64 %a.stride1, 1
  %154 = mul i64 %nc18, 4
  %155 = icmp eq i64 %a.stride0, %nc18
  %pf.bytes = select i1 %155, i64 0, i64 %154
  br i1 %unit, label %load.unit, label %load.strided

stream.done:                                      ; preds = %store.done, %sm.i.exit, %sm.nt.i.exit
  ret i32 0

stream.nt:                                        ; preds = %stream
  br label %sm.nt.i.head

stream.cached:                                    ; preds = %stream
  br label %sm.i.head

sm.nt.i.head:                                     ; preds = %sm.j.exit, %stream.nt
  %sm.nt.i = phi i64 [ 0, %stream.nt ], [ %220, %sm.j.exit ]
  %156 = icmp slt i64 %sm.nt.i, %nr10
  br i1 %156, label %sm.nt.i.body, label %sm.nt.i.exit

sm.nt.i.body:                                     ; preds = %sm.nt.i.head
  %157 = mul i64 %sm.nt.i, 128
  %158 = mul i64 %sm.nt.i, %c.stride0
  %159 = getelementptr float, ptr %win12, i64 %158
  %160 = ptrtoint ptr %159 to i64
  %161 = and i64 %160, 63
  %162 = sub i64 64, %161
  %163 = and i64 %162, 63
  %164 = lshr i64 %163, 2
  %165 = and i64 %160, 3
  %166 = icmp ne i64 %165, 0
  %167 = select i1 %166, i64 %nc11, i64 %164
  %168 = call i64 @llvm.smin.i64(i64 %167, i64 %nc11)
  br label %sm.peel.head

sm.nt.i.exit:                                     ; preds = %sm.nt.i.head
  call void @llvm.x86.sse.sfence()
  br label %stream.done

sm.peel.head:                                     ; preds = %sm.peel.body, %sm.nt.i.body
  %sm.peel = phi i64 [ 0, %sm.nt.i.body ], [ %183, %sm.peel.body ]
  %169 = icmp slt i64 %sm.peel, %168
  br i1 %169, label %sm.peel.body, label %sm.peel.exit

sm.peel.body:                                     ; preds = %sm.peel.head
  %170 = mul i64 %sm.nt.i, %a.stride0
  %171 = add i64 %170, %sm.peel
  %172 = getelementptr inbounds float, ptr %win, i64 %171
  %173 = load float, ptr %172, align 4, !alias.scope !2, !noalias !6
  %174 = mul i64 %sm.nt.i, %b.stride0
  %175 = add i64 %174, %sm.peel
  %176 = getelementptr inbounds float, ptr %win9, i64 %175
  %177 = load float, ptr %176, align 4, !alias.scope !2, !noalias !6
  %178 = add i64 %157, %sm.peel
  %179 = fadd float %173, %177
  %180 = mul i64 %sm.nt.i, %c.stride0
  %181 = add i64 %180, %sm.peel
  %182 = getelementptr inbounds float, ptr %win12, i64 %181
  store float %179, ptr %182, align 4, !alias.scope !9, !noalias !10
  %183 = add nsw i64 %sm.peel, 1
  br label %sm.peel.head

sm.peel.exit:                                     ; preds = %sm.peel.head
  %184 = sub i64 %nc11, %168
  %185 = sdiv i64 %184, 16
  br label %sm.ntv.head

sm.ntv.head:                                      ; preds = %sm.ntv.body, %sm.peel.exit
  %sm.ntv = phi i64 [ 0, %sm.peel.exit ], [ %202, %sm.ntv.body ]
  %186 = icmp slt i64 %sm.ntv, %185
  br i1 %186, label %sm.ntv.body, label %sm.ntv.exit

sm.ntv.body:                                      ; preds = %sm.ntv.head
  %187 = mul i64 %sm.ntv, 16
  %188 = add i64 %168, %187
  %189 = mul i64 %sm.nt.i, %a.stride0
  %190 = add i64 %189, %188
  %191 = getelementptr inbounds float, ptr %win, i64 %190
  %192 = load <16 x float>, ptr %191, align 4, !alias.scope !2, !noalias !6
  %193 = mul i64 %sm.nt.i, %b.stride0
  %194 = add i64 %193, %188
  %195 = getelementptr inbounds float, ptr %win9, i64 %194
  %196 = load <16 x float>, ptr %195, align 4, !alias.scope !2, !noalias !6
  %197 = add i64 %157, %188
  %198 = fadd <16 x float> %192, %196
  %199 = mul i64 %sm.nt.i, %c.stride0
  %200 = add i64 %199, %188
  %201 = getelementptr inbounds float, ptr %win12, i64 %200
  store <16 x float> %198, ptr %201, align 64, !alias.scope !9, !noalias !10, !nontemporal !11
  %202 = add nsw i64 %sm.ntv, 1
  br label %sm.ntv.head

sm.ntv.exit:                                      ; preds = %sm.ntv.head
  %203 = mul i64 %185, 16
  %204 = add i64 %168, %203
  br label %sm.j.head

sm.j.head:                                        ; preds = %sm.j.body, %sm.ntv.exit
  %sm.j = phi i64 [ %204, %sm.ntv.exit ], [ %219, %sm.j.body ]
  %205 = icmp slt i64 %sm.j, %nc11
  br i1 %205, label %sm.j.body, label %sm.j.exit

sm.j.body:                                        ; preds = %sm.j.head
  %206 = mul i64 %sm.nt.i, %a.stride0
  %207 = add i64 %206, %sm.j
  %208 = getelementptr inbounds float, ptr %win, i64 %207
  %209 = load float, ptr %208, align 4, !alias.scope !2, !noalias !6
  %210 = mul i64 %sm.nt.i, %b.stride0
  %211 = add i64 %210, %sm.j
  %212 = getelementptr inbounds float, ptr %win9, i64 %211
  %213 = load float, ptr %212, align 4, !alias.scope !2, !noalias !6
  %214 = add i64 %157, %sm.j
  %215 = fadd float %209, %213
  %216 = mul i64 %sm.nt.i, %c.stride0
  %217 = add i64 %216, %sm.j
  %218 = getelementptr inbounds float, ptr %win12, i64 %217
  store float %215, ptr %218, align 4, !alias.scope !9, !noalias !10
  %219 = add nsw i64 %sm.j, 1
  br label %sm.j.head

sm.j.exit:                                        ; preds = %sm.j.head
  %220 = add nsw i64 %sm.nt.i, 1
  br label %sm.nt.i.head

sm.i.head:                                        ; preds = %sm.j.exit15, %stream.cached
  %sm.i = phi i64 [ 0, %stream.cached ], [ %238, %sm.j.exit15 ]
  %221 = icmp slt i64 %sm.i, %nr10
  br i1 %221, label %sm.i.body, label %sm.i.exit

sm.i.body:                                        ; preds = %sm.i.head
  %222 = mul i64 %sm.i, 128
  br label %sm.j.head13

sm.i.exit:                                        ; preds = %sm.i.head
  br label %stream.done

sm.j.head13:                                      ; preds = %sm.j.body14, %sm.i.body
  %sm.j16 = phi i64 [ 0, %sm.i.body ], [ %237, %sm.j.body14 ]
  %223 = icmp slt i64 %sm.j16, %nc11
  br i1 %223, label %sm.j.body14, label %sm.j.exit15

sm.j.body14:                                      ; preds = %sm.j.head13
  %224 = mul i64 %sm.i, %a.stride0
  %225 = add i64 %224, %sm.j16
  %226 = getelementptr inbounds float, ptr %win, i64 %225
  %227 = load float, ptr %226, align 4, !alias.scope !2, !noalias !6
  %228 = mul i64 %sm.i, %b.stride0
  %229 = add i64 %228, %sm.j16
  %230 = getelementptr inbounds float, ptr %win9, i64 %229
  %231 = load float, ptr %230, align 4, !alias.scope !2, !noalias !6
  %232 = add i64 %222, %sm.j16
  %233 = fadd float %227, %231
  %234 = mul i64 %sm.i, %c.stride0
  %235 = add i64 %234, %sm.j16
  %236 = getelementptr inbounds float, ptr %win12, i64 %235
  store float %233, ptr %236, align 4, !alias.scope !9, !noalias !10
  %237 = add nsw i64 %sm.j16, 1
  br label %sm.j.head13

sm.j.exit15:                                      ; preds = %sm.j.head13
  %238 = add nsw i64 %sm.i, 1
  br label %sm.i.head

load.unit:                                        ; preds = %stream.buffered
  br label %ld.i.head

load.strided:                                     ; preds = %stream.buffered
  br label %ld.i.head20

load.padrows:                                     ; preds = %ld.i.exit22, %ld.i.exit
  %239 = mul i64 %nr17, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %263, %ld.padc.exit ]
  %240 = icmp slt i64 %ld.i, %nr17
  br i1 %240, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %241 = mul i64 %ld.i, %a.stride0
  %242 = mul i64 %ld.i, 128
  %243 = mul i64 8, %a.stride0
  %244 = add i64 %241, %243
  %pf.row = getelementptr float, ptr %win19, i64 %244
  %245 = add i64 %pf.bytes, 63
  %246 = lshr i64 %245, 6
  br label %pf.line.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

pf.line.head:                                     ; preds = %pf.line.body, %ld.i.body
  %pf.line = phi i64 [ 0, %ld.i.body ], [ %250, %pf.line.body ]
  %247 = icmp slt i64 %pf.line, %246
  br i1 %247, label %pf.line.body, label %pf.line.exit

pf.line.body:                                     ; preds = %pf.line.head
  %248 = mul i64 %pf.line, 64
  %249 = getelementptr i8, ptr %pf.row, i64 %248
  call void @llvm.prefetch.p0(ptr %249, i32 0, i32 3, i32 1)
  %250 = add nsw i64 %pf.line, 1
  br label %pf.line.head

pf.line.exit:                                     ; preds = %pf.line.head
  br label %ld.j.head

ld.j.head:                                        ; preds = %ld.j.body, %pf.line.exit
  %ld.j = phi i64 [ 0, %pf.line.exit ], [ %257, %ld.j.body ]
  %251 = icmp slt i64 %ld.j, %nc18
  br i1 %251, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %252 = add i64 %241, %ld.j
  %253 = getelementptr inbounds float, ptr %win19, i64 %252
  %254 = load float, ptr %253, align 4, !alias.scope !12, !noalias !13
  %255 = add i64 %242, %ld.j
  %256 = getelementptr inbounds float, ptr %buf0, i64 %255
  store float %254, ptr %256, align 4, !alias.scope !13, !noalias !12
  %257 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %258 = add i64 %242, 128
  %259 = add i64 %242, %nc18
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %259, %ld.j.exit ], [ %262, %ld.padc.body ]
  %260 = icmp slt i64 %ld.padc, %258
  br i1 %260, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %261 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %261, align 4, !alias.scope !13, !noalias !12
  %262 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %263 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head20:                                      ; preds = %ld.padc.exit30, %load.strided
  %ld.i23 = phi i64 [ 0, %load.strided ], [ %280, %ld.padc.exit30 ]
  %264 = icmp slt i64 %ld.i23, %nr17
  br i1 %264, label %ld.i.body21, label %ld.i.exit22

ld.i.body21:                                      ; preds = %ld.i.head20
  %265 = mul i64 %ld.i23, %a.stride0
  %266 = mul i64 %ld.i23, 128
  br label %ld.j.head24

ld.i.exit22:                                      ; preds = %ld.i.head20
  br label %load.padrows

ld.j.head24:                                      ; preds = %ld.j.body25, %ld.i.body21
  %ld.j27 = phi i64 [ 0, %ld.i.body21 ], [ %274, %ld.j.body25 ]
  %267 = icmp slt i64 %ld.j27, %nc18
  br i1 %267, label %ld.j.body25, label %ld.j.exit26

ld.j.body25:                                      ; preds = %ld.j.head24
  %268 = mul i64 %ld.j27, %a.stride1
  %269 = add i64 %265, %268
  %270 = getelementptr inbounds float, ptr %win19, i64 %269
  %271 = load float, ptr %270, align 4, !alias.scope !12, !noalias !13
  %272 = add i64 %266, %ld.j27
  %273 = getelementptr inbounds float, ptr %buf0, i64 %272
  store float %271, ptr %273, align 4, !alias.scope !13, !noalias !12
  %274 = add nsw i64 %ld.j27, 1
  br label %ld.j.head24

ld.j.exit26:                                      ; preds = %ld.j.head24
  %275 = add i64 %266, 128
  %276 = add i64 %266, %nc18
  br label %ld.padc.head28

ld.padc.head28:                                   ; preds = %ld.padc.body29, %ld.j.exit26
  %ld.padc31 = phi i64 [ %276, %ld.j.exit26 ], [ %279, %ld.padc.body29 ]
  %277 = icmp slt i64 %ld.padc31, %275
  br i1 %277, label %ld.padc.body29, label %ld.padc.exit30

ld.padc.body29:                                   ; preds = %ld.padc.head28
  %278 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc31
  store float 0.000000e+00, ptr %278, align 4, !alias.scope !13, !noalias !12
  %279 = add nsw i64 %ld.padc31, 1
  br label %ld.padc.head28

ld.padc.exit30:                                   ; preds = %ld.padc.head28
  %280 = add nsw i64 %ld.i23, 1
  br label %ld.i.head20

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %239, %load.padrows ], [ %283, %ld.padr.body ]
  %281 = icmp slt i64 %ld.padr, 4096
  br i1 %281, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %282 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %282, align 4, !alias.scope !13, !noalias !12
  %283 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %284 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %285 = call i64 @llvm.smax.i64(i64 %284, i64 0)
  %286 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %287 = call i64 @llvm.smax.i64(i64 %286, i64 0)
  %288 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %289 = call i64 @llvm.smax.i64(i64 %288, i64 0)
  %290 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %291 = call i64 @llvm.smax.i64(i64 %290, i64 0)
  %292 = mul i64 0, %b.stride0
  %293 = add i64 0, %292
  %294 = mul i64 0, %b.stride1
  %295 = add i64 %293, %294
  %296 = sub i64 %b.dim0, 0
  %297 = call i64 @llvm.smin.i64(i64 %285, i64 %296)
  %298 = call i64 @llvm.smin.i64(i64 %297, i64 32)
  %299 = call i64 @llvm.smax.i64(i64 %298, i64 0)
  %300 = call i64 @llvm.smin.i64(i64 %287, i64 128)
  %301 = call i64 @llvm.smin.i64(i64 %300, i64 128)
  %302 = call i64 @llvm.smax.i64(i64 %301, i64 0)
  %nr32 = select i1 true, i64 %299, i64 0
  %nc33 = select i1 true, i64 %302, i64 0
  %win34 = getelementptr float, ptr %b.data, i64 %295
  %unit35 = icmp eq i64 %b.stride1, 1
  %303 = mul i64 %nc33, 4
  %304 = icmp eq i64 %b.stride0, %nc33
  %pf.bytes39 = select i1 %304, i64 0, i64 %303
  br i1 %unit35, label %load.unit36, label %load.strided37

load.unit36:                                      ; preds = %ld.padr.exit
  br label %ld.i.head40

load.strided37:                                   ; preds = %ld.padr.exit
  br label %ld.i.head57

load.padrows38:                                   ; preds = %ld.i.exit59, %ld.i.exit42
  %305 = mul i64 %nr32, 128
  br label %ld.padr.head69

ld.i.head40:                                      ; preds = %ld.padc.exit55, %load.unit36
  %ld.i43 = phi i64 [ 0, %load.unit36 ], [ %329, %ld.padc.exit55 ]
  %306 = icmp slt i64 %ld.i43, %nr32
  br i1 %306, label %ld.i.body41, label %ld.i.exit42

ld.i.body41:                                      ; preds = %ld.i.head40
  %307 = mul i64 %ld.i43, %b.stride0
  %308 = mul i64 %ld.i43, 128
  %309 = mul i64 8, %b.stride0
  %310 = add i64 %307, %309
  %pf.row44 = getelementptr float, ptr %win34, i64 %310
  %311 = add i64 %pf.bytes39, 63
  %312 = lshr i64 %311, 6
  br label %pf.line.head45

ld.i.exit42:                                      ; preds = %ld.i.head40
  br label %load.padrows38

pf.line.head45:                                   ; preds = %pf.line.body46, %ld.i.body41
  %pf.line48 = phi i64 [ 0, %ld.i.body41 ], [ %316, %pf.line.body46 ]
  %313 = icmp slt i64 %pf.line48, %312
  br i1 %313, label %pf.line.body46, label %pf.line.exit47

pf.line.body46:                                   ; preds = %pf.line.head45
  %314 = mul i64 %pf.line48, 64
  %315 = getelementptr i8, ptr %pf.row44, i64 %314
  call void @llvm.prefetch.p0(ptr %315, i32 0, i32 3, i32 1)
  %316 = add nsw i64 %pf.line48, 1
  br label %pf.line.head45

pf.line.exit47:                                   ; preds = %pf.line.head45
  br label %ld.j.head49

ld.j.head49:                                      ; preds = %ld.j.body50, %pf.line.exit47
  %ld.j52 = phi i64 [ 0, %pf.line.exit47 ], [ %323, %ld.j.body50 ]
  %317 = icmp slt i64 %ld.j52, %nc33
  br i1 %317, label %ld.j.body50, label %ld.j.exit51

ld.j.body50:                                      ; preds = %ld.j.head49
  %318 = add i64 %307, %ld.j52
  %319 = getelementptr inbounds float, ptr %win34, i64 %318
  %320 = load float, ptr %319, align 4, !alias.scope !12, !noalias !13
  %321 = add i64 %308, %ld.j52
  %322 = getelementptr inbounds float, ptr %buf1, i64 %321
  store float %320, ptr %322, align 4, !alias.scope !13, !noalias !12
  %323 = add nsw i64 %ld.j52, 1
  br label %ld.j.head49

ld.j.exit51:                                      ; preds = %ld.j.head49
  %324 = add i64 %308, 128
  %325 = add i64 %308, %nc33
  br label %ld.padc.head53

ld.padc.head53:                                   ; preds = %ld.padc.body54, %ld.j.exit51
  %ld.padc56 = phi i64 [ %325, %ld.j.exit51 ], [ %328, %ld.padc.body54 ]
  %326 = icmp slt i64 %ld.padc56, %324
  br i1 %326, label %ld.padc.body54, label %ld.padc.exit55

ld.padc.body54:                                   ; preds = %ld.padc.head53
  %327 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc56
  store float 0.000000e+00, ptr %327, align 4, !alias.scope !13, !noalias !12
  %328 = add nsw i64 %ld.padc56, 1
  br label %ld.padc.head53

ld.padc.exit55:                                   ; preds = %ld.padc.head53
  %329 = add nsw i64 %ld.i43, 1
  br label %ld.i.head40

ld.i.head57:                                      ; preds = %ld.padc.exit67, %load.strided37
  %ld.i60 = phi i64 [ 0, %load.strided37 ], [ %346, %ld.padc.exit67 ]
  %330 = icmp slt i64 %ld.i60, %nr32
  br i1 %330, label %ld.i.body58, label %ld.i.exit59

ld.i.body58:                                      ; preds = %ld.i.head57
  %331 = mul i64 %ld.i60, %b.stride0
  %332 = mul i64 %ld.i60, 128
  br label %ld.j.head61

ld.i.exit59:                                      ; preds = %ld.i.head57
  br label %load.padrows38

ld.j.head61:                                      ; preds = %ld.j.body62, %ld.i.body58
  %ld.j64 = phi i64 [ 0, %ld.i.body58 ], [ %340, %ld.j.body62 ]
  %333 = icmp slt i64 %ld.j64, %nc33
  br i1 %333, label %ld.j.body62, label %ld.j.exit63

ld.j.body62:                                      ; preds = %ld.j.head61
  %334 = mul i64 %ld.j64, %b.stride1
  %335 = add i64 %331, %334
  %336 = getelementptr inbounds float, ptr %win34, i64 %335
  %337 = load float, ptr %336, align 4, !alias.scope !12, !noalias !13
  %338 = add i64 %332, %ld.j64
  %339 = getelementptr inbounds float, ptr %buf1, i64 %338
  store float %337, ptr %339, align 4, !alias.scope !13, !noalias !12
  %340 = add nsw i64 %ld.j64, 1
  br label %ld.j.head61

ld.j.exit63:                                      ; preds = %ld.j.head61
  %341 = add i64 %332, 128
  %342 = add i64 %332, %nc33
  br label %ld.padc.head65

ld.padc.head65:                                   ; preds = %ld.padc.body66, %ld.j.exit63
  %ld.padc68 = phi i64 [ %342, %ld.j.exit63 ], [ %345, %ld.padc.body66 ]
  %343 = icmp slt i64 %ld.padc68, %341
  br i1 %343, label %ld.padc.body66, label %ld.padc.exit67

ld.padc.body66:                                   ; preds = %ld.padc.head65
  %344 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc68
  store float 0.000000e+00, ptr %344, align 4, !alias.scope !13, !noalias !12
  %345 = add nsw i64 %ld.padc68, 1
  br label %ld.padc.head65

ld.padc.exit67:                                   ; preds = %ld.padc.head65
  %346 = add nsw i64 %ld.i60, 1
  br label %ld.i.head57

ld.padr.head69:                                   ; preds = %ld.padr.body70, %load.padrows38
  %ld.padr72 = phi i64 [ %305, %load.padrows38 ], [ %349, %ld.padr.body70 ]
  %347 = icmp slt i64 %ld.padr72, 4096
  br i1 %347, label %ld.padr.body70, label %ld.padr.exit71

ld.padr.body70:                                   ; preds = %ld.padr.head69
  %348 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr72
  store float 0.000000e+00, ptr %348, align 4, !alias.scope !13, !noalias !12
  %349 = add nsw i64 %ld.padr72, 1
  br label %ld.padr.head69

ld.padr.exit71:                                   ; preds = %ld.padr.head69
  %350 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %351 = call i64 @llvm.smax.i64(i64 %350, i64 0)
  %352 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %353 = call i64 @llvm.smax.i64(i64 %352, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit71
  %ew = phi i64 [ 0, %ld.padr.exit71 ], [ %361, %ew.body ]
  %354 = icmp slt i64 %ew, 4096
  br i1 %354, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %355 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %356 = load float, ptr %355, align 4, !alias.scope !13, !noalias !12
  %357 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %358 = load float, ptr %357, align 4, !alias.scope !13, !noalias !12
  %359 = fadd float %356, %358
  %360 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %359, ptr %360, align 4, !alias.scope !13, !noalias !12
  %361 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %362 = mul i64 0, %c.stride0
  %363 = add i64 0, %362
  %364 = mul i64 0, %c.stride1
  %365 = add i64 %363, %364
  %366 = sub i64 %c.dim0, 0
  %367 = call i64 @llvm.smin.i64(i64 %351, i64 %366)
  %368 = call i64 @llvm.smin.i64(i64 %367, i64 32)
  %369 = call i64 @llvm.smax.i64(i64 %368, i64 0)
  %370 = call i64 @llvm.smin.i64(i64 %353, i64 128)
  %371 = call i64 @llvm.smin.i64(i64 %370, i64 128)
  %372 = call i64 @llvm.smax.i64(i64 %371, i64 0)
  %nr73 = select i1 true, i64 %369, i64 0
  %nc74 = select i1 true, i64 %372, i64 0
  %win75 = getelementptr float, ptr %c.data, i64 %365
  %unit76 = icmp eq i64 %c.stride1, 1
  br i1 %unit76, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head77

store.done:                                       ; preds = %st.i.exit79, %st.i.exit
  br label %stream.done

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %383, %st.j.exit ]
  %373 = icmp slt i64 %st.i, %nr73
  br i1 %373, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %374 = mul i64 %st.i, %c.stride0
  %375 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %382, %st.j.body ]
  %376 = icmp slt i64 %st.j, %nc74
  br i1 %376, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %377 = add i64 %375, %st.j
  %378 = getelementptr inbounds float, ptr %buf0, i64 %377
  %379 = load float, ptr %378, align 4, !alias.scope !13, !noalias !12
  %380 = add i64 %374, %st.j
  %381 = getelementptr inbounds float, ptr %win75, i64 %380
  store float %379, ptr %381, align 4, !alias.scope !12, !noalias !13
  %382 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %383 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head77:                                      ; preds = %st.j.exit83, %store.strided
  %st.i80 = phi i64 [ 0, %store.strided ], [ %395, %st.j.exit83 ]
  %384 = icmp slt i64 %st.i80, %nr73
  br i1 %384, label %st.i.body78, label %st.i.exit79

st.i.body78:                                      ; preds = %st.i.head77
  %385 = mul i64 %st.i80, %c.stride0
  %386 = mul i64 %st.i80, 128
  br label %st.j.head81

st.i.exit79:                                      ; preds = %st.i.head77
  br label %store.done

st.j.head81:                                      ; preds = %st.j.body82, %st.i.body78
  %st.j84 = phi i64 [ 0, %st.i.body78 ], [ %394, %st.j.body82 ]
  %387 = icmp slt i64 %st.j84, %nc74
  br i1 %387, label %st.j.body82, label %st.j.exit83

st.j.body82:                                      ; preds = %st.j.head81
  %388 = add i64 %386, %st.j84
  %389 = getelementptr inbounds float, ptr %buf0, i64 %388
  %390 = load float, ptr %389, align 4, !alias.scope !13, !noalias !12
  %391 = mul i64 %st.j84, %c.stride1
  %392 = add i64 %385, %391
  %393 = getelementptr inbounds float, ptr %win75, i64 %392
  store float %390, ptr %393, align 4, !alias.scope !12, !noalias !13
  %394 = add nsw i64 %st.j84, 1
  br label %st.j.head81

st.j.exit83:                                      ; preds = %st.j.head81
  %395 = add nsw i64 %st.i80, 1
  br label %st.i.head77

after.return:                                     ; No predecessors!
  ret i32 0
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smin.i64(i64, i64) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

; Function Attrs: nounwind
declare void @llvm.x86.sse.sfence() #0

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite, inaccessiblemem: readwrite)
declare void @llvm.prefetch.p0(ptr nocapture readonly, i32 immarg, i32 immarg, i32 immarg) #2

attributes #0 = { nounwind }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite, inaccessiblemem: readwrite) }

!0 = !{}
!1 = !{i64 64}
!2 = !{!3, !5}
!3 = !{!"pto.tensor", !4}
!4 = !{!"pto.domain"}
!5 = !{!"pto.stream0.load", !4}
!6 = !{!7, !8}
!7 = !{!"pto.scratch", !4}
!8 = !{!"pto.stream0.store", !4}
!9 = !{!3, !8}
!10 = !{!7, !5}
!11 = !{i32 1}
!12 = !{!3}
!13 = !{!7}
