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
  %divzero = alloca i64, align 8
  store i64 0, ptr %divzero, align 8
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
  %oob = icmp slt i64 %a.dim0, 0
  br i1 %oob, label %fail7, label %ok8

fail7:                                            ; preds = %ok5
  %err_detail9 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 0, ptr %err_detail9, align 8
  %25 = getelementptr inbounds i64, ptr %err_detail9, i64 1
  store i64 %a.dim0, ptr %25, align 8
  ret i32 9

ok8:                                              ; preds = %ok5
  %26 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %27 = call i64 @llvm.smax.i64(i64 %26, i64 0)
  %28 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %29 = call i64 @llvm.smax.i64(i64 %28, i64 0)
  %30 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %31 = call i64 @llvm.smax.i64(i64 %30, i64 0)
  %32 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %33 = call i64 @llvm.smax.i64(i64 %32, i64 0)
  %34 = mul i64 0, %a.stride0
  %35 = add i64 0, %34
  %36 = mul i64 0, %a.stride1
  %37 = add i64 %35, %36
  %38 = sub i64 %a.dim0, 0
  %39 = call i64 @llvm.smin.i64(i64 %27, i64 %38)
  %40 = call i64 @llvm.smin.i64(i64 %39, i64 32)
  %41 = call i64 @llvm.smax.i64(i64 %40, i64 0)
  %42 = call i64 @llvm.smin.i64(i64 %29, i64 128)
  %43 = call i64 @llvm.smin.i64(i64 %42, i64 128)
  %44 = call i64 @llvm.smax.i64(i64 %43, i64 0)
  %nr = select i1 true, i64 %41, i64 0
  %nc = select i1 true, i64 %44, i64 0
  %win = getelementptr float, ptr %a.data, i64 %37
  %oob10 = icmp slt i64 %a.dim0, 0
  br i1 %oob10, label %fail11, label %ok12

fail11:                                           ; preds = %ok8
  %err_detail13 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 4398046511104, ptr %err_detail13, align 8
  %45 = getelementptr inbounds i64, ptr %err_detail13, i64 1
  store i64 %a.dim0, ptr %45, align 8
  ret i32 9

ok12:                                             ; preds = %ok8
  %46 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %47 = call i64 @llvm.smax.i64(i64 %46, i64 0)
  %48 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %49 = call i64 @llvm.smax.i64(i64 %48, i64 0)
  %50 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %51 = call i64 @llvm.smax.i64(i64 %50, i64 0)
  %52 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %53 = call i64 @llvm.smax.i64(i64 %52, i64 0)
  %54 = mul i64 0, %b.stride0
  %55 = add i64 0, %54
  %56 = mul i64 0, %b.stride1
  %57 = add i64 %55, %56
  %58 = sub i64 %b.dim0, 0
  %59 = call i64 @llvm.smin.i64(i64 %47, i64 %58)
  %60 = call i64 @llvm.smin.i64(i64 %59, i64 32)
  %61 = call i64 @llvm.smax.i64(i64 %60, i64 0)
  %62 = call i64 @llvm.smin.i64(i64 %49, i64 128)
  %63 = call i64 @llvm.smin.i64(i64 %62, i64 128)
  %64 = call i64 @llvm.smax.i64(i64 %63, i64 0)
  %nr14 = select i1 true, i64 %61, i64 0
  %nc15 = select i1 true, i64 %64, i64 0
  %win16 = getelementptr float, ptr %b.data, i64 %57
  %65 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %66 = call i64 @llvm.smax.i64(i64 %65, i64 0)
  %67 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %68 = call i64 @llvm.smax.i64(i64 %67, i64 0)
  %69 = mul i64 0, %c.stride0
  %70 = add i64 0, %69
  %71 = mul i64 0, %c.stride1
  %72 = add i64 %70, %71
  %73 = sub i64 %c.dim0, 0
  %74 = call i64 @llvm.smin.i64(i64 %66, i64 %73)
  %75 = call i64 @llvm.smin.i64(i64 %74, i64 32)
  %76 = call i64 @llvm.smax.i64(i64 %75, i64 0)
  %77 = call i64 @llvm.smin.i64(i64 %68, i64 128)
  %78 = call i64 @llvm.smin.i64(i64 %77, i64 128)
  %79 = call i64 @llvm.smax.i64(i64 %78, i64 0)
  %nr17 = select i1 true, i64 %76, i64 0
  %nc18 = select i1 true, i64 %79, i64 0
  %win19 = getelementptr float, ptr %c.data, i64 %72
  %80 = icmp sge i64 %c.stride0, 0
  %81 = icmp eq i64 %c.stride1, 1
  %82 = and i1 %81, %80
  %83 = sub i64 %nr17, 1
  %84 = mul i64 %83, %c.stride0
  %85 = add i64 %84, %nc18
  %86 = icmp eq i64 %nc18, 0
  %87 = icmp eq i64 %nr17, 0
  %88 = or i1 %87, %86
  %89 = select i1 %88, i64 0, i64 %85
  %90 = ptrtoint ptr %win19 to i64
  %91 = mul i64 %89, 4
  %92 = add i64 %90, %91
  %93 = icmp eq i64 %a.stride1, 1
  %94 = and i1 %82, %93
  %95 = icmp sge i64 %a.stride0, 0
  %96 = and i1 %94, %95
  %97 = icmp sge i64 %nr, %nr17
  %98 = and i1 %96, %97
  %99 = icmp sge i64 %nc, %nc18
  %100 = and i1 %98, %99
  %101 = sub i64 %nr17, 1
  %102 = mul i64 %101, %a.stride0
  %103 = add i64 %102, %nc18
  %104 = icmp eq i64 %nc18, 0
  %105 = icmp eq i64 %nr17, 0
  %106 = or i1 %105, %104
  %107 = select i1 %106, i64 0, i64 %103
  %108 = ptrtoint ptr %win to i64
  %109 = mul i64 %107, 4
  %110 = add i64 %108, %109
  %111 = icmp ule i64 %92, %108
  %112 = icmp ule i64 %110, %90
  %113 = or i1 %112, %111
  %114 = and i1 %100, %113
  %115 = icmp eq i64 %b.stride1, 1
  %116 = and i1 %114, %115
  %117 = icmp sge i64 %b.stride0, 0
  %118 = and i1 %116, %117
  %119 = icmp sge i64 %nr14, %nr17
  %120 = and i1 %118, %119
  %121 = icmp sge i64 %nc15, %nc18
  %122 = and i1 %120, %121
  %123 = sub i64 %nr17, 1
  %124 = mul i64 %123, %b.stride0
  %125 = add i64 %124, %nc18
  %126 = icmp eq i64 %nc18, 0
  %127 = icmp eq i64 %nr17, 0
  %128 = or i1 %127, %126
  %129 = select i1 %128, i64 0, i64 %125
  %130 = ptrtoint ptr %win16 to i64
  %131 = mul i64 %129, 4
  %132 = add i64 %130, %131
  %133 = icmp ule i64 %92, %130
  %134 = icmp ule i64 %132, %90
  %135 = or i1 %134, %133
  %136 = and i1 %122, %135
  br i1 %136, label %stream, label %stream.buffered

stream:                                           ; preds = %ok12
  br i1 %stream_stores, label %stream.nt, label %stream.cached

stream.buffered:                                  ; preds = %ok12
  %oob24 = icmp slt i64 %a.dim0, 0
  br i1 %oob24, label %fail25, label %ok26

stream.done:                                      ; preds = %store.done, %sm.i.exit, %sm.nt.i.exit
  ret i32 0

stream.nt:                                        ; preds = %stream
  br label %sm.nt.i.head

stream.cached:                                    ; preds = %stream
  br label %sm.i.head

sm.nt.i.head:                                     ; preds = %sm.j.exit, %stream.nt
  %sm.nt.i = phi i64 [ 0, %stream.nt ], [ %201, %sm.j.exit ]
  %137 = icmp slt i64 %sm.nt.i, %nr17
  br i1 %137, label %sm.nt.i.body, label %sm.nt.i.exit

sm.nt.i.body:                                     ; preds = %sm.nt.i.head
  %138 = mul i64 %sm.nt.i, 128
  %139 = mul i64 %sm.nt.i, %c.stride0
  %140 = getelementptr float, ptr %win19, i64 %139
  %141 = ptrtoint ptr %140 to i64
  %142 = and i64 %141, 63
  %143 = sub i64 64, %142
  %144 = and i64 %143, 63
  %145 = lshr i64 %144, 2
  %146 = and i64 %141, 3
  %147 = icmp ne i64 %146, 0
  %148 = select i1 %147, i64 %nc18, i64 %145
  %149 = call i64 @llvm.smin.i64(i64 %148, i64 %nc18)
  br label %sm.peel.head

sm.nt.i.exit:                                     ; preds = %sm.nt.i.head
  call void @llvm.x86.sse.sfence()
  br label %stream.done

sm.peel.head:                                     ; preds = %sm.peel.body, %sm.nt.i.body
  %sm.peel = phi i64 [ 0, %sm.nt.i.body ], [ %164, %sm.peel.body ]
  %150 = icmp slt i64 %sm.peel, %149
  br i1 %150, label %sm.peel.body, label %sm.peel.exit

sm.peel.body:                                     ; preds = %sm.peel.head
  %151 = mul i64 %sm.nt.i, %a.stride0
  %152 = add i64 %151, %sm.peel
  %153 = getelementptr inbounds float, ptr %win, i64 %152
  %154 = load float, ptr %153, align 4, !alias.scope !2, !noalias !6
  %155 = mul i64 %sm.nt.i, %b.stride0
  %156 = add i64 %155, %sm.peel
  %157 = getelementptr inbounds float, ptr %win16, i64 %156
  %158 = load float, ptr %157, align 4, !alias.scope !2, !noalias !6
  %159 = add i64 %138, %sm.peel
  %160 = fadd float %154, %158
  %161 = mul i64 %sm.nt.i, %c.stride0
  %162 = add i64 %161, %sm.peel
  %163 = getelementptr inbounds float, ptr %win19, i64 %162
  store float %160, ptr %163, align 4, !alias.scope !9, !noalias !10
  %164 = add nsw i64 %sm.peel, 1
  br label %sm.peel.head

sm.peel.exit:                                     ; preds = %sm.peel.head
  %165 = sub i64 %nc18, %149
  %166 = sdiv i64 %165, 16
  br label %sm.ntv.head

sm.ntv.head:                                      ; preds = %sm.ntv.body, %sm.peel.exit
  %sm.ntv = phi i64 [ 0, %sm.peel.exit ], [ %183, %sm.ntv.body ]
  %167 = icmp slt i64 %sm.ntv, %166
  br i1 %167, label %sm.ntv.body, label %sm.ntv.exit

sm.ntv.body:                                      ; preds = %sm.ntv.head
  %168 = mul i64 %sm.ntv, 16
  %169 = add i64 %149, %168
  %170 = mul i64 %sm.nt.i, %a.stride0
  %171 = add i64 %170, %169
  %172 = getelementptr inbounds float, ptr %win, i64 %171
  %173 = load <16 x float>, ptr %172, align 4, !alias.scope !2, !noalias !6
  %174 = mul i64 %sm.nt.i, %b.stride0
  %175 = add i64 %174, %169
  %176 = getelementptr inbounds float, ptr %win16, i64 %175
  %177 = load <16 x float>, ptr %176, align 4, !alias.scope !2, !noalias !6
  %178 = add i64 %138, %169
  %179 = fadd <16 x float> %173, %177
  %180 = mul i64 %sm.nt.i, %c.stride0
  %181 = add i64 %180, %169
  %182 = getelementptr inbounds float, ptr %win19, i64 %181
  store <16 x float> %179, ptr %182, align 64, !alias.scope !9, !noalias !10, !nontemporal !11
  %183 = add nsw i64 %sm.ntv, 1
  br label %sm.ntv.head

sm.ntv.exit:                                      ; preds = %sm.ntv.head
  %184 = mul i64 %166, 16
  %185 = add i64 %149, %184
  br label %sm.j.head

sm.j.head:                                        ; preds = %sm.j.body, %sm.ntv.exit
  %sm.j = phi i64 [ %185, %sm.ntv.exit ], [ %200, %sm.j.body ]
  %186 = icmp slt i64 %sm.j, %nc18
  br i1 %186, label %sm.j.body, label %sm.j.exit

sm.j.body:                                        ; preds = %sm.j.head
  %187 = mul i64 %sm.nt.i, %a.stride0
  %188 = add i64 %187, %sm.j
  %189 = getelementptr inbounds float, ptr %win, i64 %188
  %190 = load float, ptr %189, align 4, !alias.scope !2, !noalias !6
  %191 = mul i64 %sm.nt.i, %b.stride0
  %192 = add i64 %191, %sm.j
  %193 = getelementptr inbounds float, ptr %win16, i64 %192
  %194 = load float, ptr %193, align 4, !alias.scope !2, !noalias !6
  %195 = add i64 %138, %sm.j
  %196 = fadd float %190, %194
  %197 = mul i64 %sm.nt.i, %c.stride0
  %198 = add i64 %197, %sm.j
  %199 = getelementptr inbounds float, ptr %win19, i64 %198
  store float %196, ptr %199, align 4, !alias.scope !9, !noalias !10
  %200 = add nsw i64 %sm.j, 1
  br label %sm.j.head

sm.j.exit:                                        ; preds = %sm.j.head
  %201 = add nsw i64 %sm.nt.i, 1
  br label %sm.nt.i.head

sm.i.head:                                        ; preds = %sm.j.exit22, %stream.cached
  %sm.i = phi i64 [ 0, %stream.cached ], [ %219, %sm.j.exit22 ]
  %202 = icmp slt i64 %sm.i, %nr17
  br i1 %202, label %sm.i.body, label %sm.i.exit

sm.i.body:                                        ; preds = %sm.i.head
  %203 = mul i64 %sm.i, 128
  br label %sm.j.head20

sm.i.exit:                                        ; preds = %sm.i.head
  br label %stream.done

sm.j.head20:                                      ; preds = %sm.j.body21, %sm.i.body
  %sm.j23 = phi i64 [ 0, %sm.i.body ], [ %218, %sm.j.body21 ]
  %204 = icmp slt i64 %sm.j23, %nc18
  br i1 %204, label %sm.j.body21, label %sm.j.exit22

sm.j.body21:                                      ; preds = %sm.j.head20
  %205 = mul i64 %sm.i, %a.stride0
  %206 = add i64 %205, %sm.j23
  %207 = getelementptr inbounds float, ptr %win, i64 %206
  %208 = load float, ptr %207, align 4, !alias.scope !2, !noalias !6
  %209 = mul i64 %sm.i, %b.stride0
  %210 = add i64 %209, %sm.j23
  %211 = getelementptr inbounds float, ptr %win16, i64 %210
  %212 = load float, ptr %211, align 4, !alias.scope !2, !noalias !6
  %213 = add i64 %203, %sm.j23
  %214 = fadd float %208, %212
  %215 = mul i64 %sm.i, %c.stride0
  %216 = add i64 %215, %sm.j23
  %217 = getelementptr inbounds float, ptr %win19, i64 %216
  store float %214, ptr %217, align 4, !alias.scope !9, !noalias !10
  %218 = add nsw i64 %sm.j23, 1
  br label %sm.j.head20

sm.j.exit22:                                      ; preds = %sm.j.head20
  %219 = add nsw i64 %sm.i, 1
  br label %sm.i.head

fail25:                                           ; preds = %stream.buffered
  %err_detail27 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 0, ptr %err_detail27, align 8
  %220 = getelementptr inbounds i64, ptr %err_detail27, i64 1
  store i64 %a.dim0, ptr %220, align 8
  ret i32 9

ok26:                                             ; preds = %stream.buffered
  %221 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %222 = call i64 @llvm.smax.i64(i64 %221, i64 0)
  %223 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %224 = call i64 @llvm.smax.i64(i64 %223, i64 0)
  %225 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %226 = call i64 @llvm.smax.i64(i64 %225, i64 0)
  %227 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %228 = call i64 @llvm.smax.i64(i64 %227, i64 0)
  %229 = mul i64 0, %a.stride0
  %230 = add i64 0, %229
  %231 = mul i64 0, %a.stride1
  %232 = add i64 %230, %231
  %233 = sub i64 %a.dim0, 0
  %234 = call i64 @llvm.smin.i64(i64 %222, i64 %233)
  %235 = call i64 @llvm.smin.i64(i64 %234, i64 32)
  %236 = call i64 @llvm.smax.i64(i64 %235, i64 0)
  %237 = call i64 @llvm.smin.i64(i64 %224, i64 128)
  %238 = call i64 @llvm.smin.i64(i64 %237, i64 128)
  %239 = call i64 @llvm.smax.i64(i64 %238, i64 0)
  %nr28 = select i1 true, i64 %236, i64 0
  %nc29 = select i1 true, i64 %239, i64 0
  %win30 = getelementptr float, ptr %a.data, i64 %232
  %unit = icmp eq i64 %a.stride1, 1
  %240 = mul i64 %nc29, 4
  %241 = icmp eq i64 %a.stride0, %nc29
  %pf.bytes = select i1 %241, i64 0, i64 %240
  br i1 %unit, label %load.unit, label %load.strided

load.unit:                                        ; preds = %ok26
  br label %ld.i.head

load.strided:                                     ; preds = %ok26
  br label %ld.i.head31

load.padrows:                                     ; preds = %ld.i.exit33, %ld.i.exit
  %242 = mul i64 %nr28, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %266, %ld.padc.exit ]
  %243 = icmp slt i64 %ld.i, %nr28
  br i1 %243, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %244 = mul i64 %ld.i, %a.stride0
  %245 = mul i64 %ld.i, 128
  %246 = mul i64 8, %a.stride0
  %247 = add i64 %244, %246
  %pf.row = getelementptr float, ptr %win30, i64 %247
  %248 = add i64 %pf.bytes, 63
  %249 = lshr i64 %248, 6
  br label %pf.line.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

pf.line.head:                                     ; preds = %pf.line.body, %ld.i.body
  %pf.line = phi i64 [ 0, %ld.i.body ], [ %253, %pf.line.body ]
  %250 = icmp slt i64 %pf.line, %249
  br i1 %250, label %pf.line.body, label %pf.line.exit

pf.line.body:                                     ; preds = %pf.line.head
  %251 = mul i64 %pf.line, 64
  %252 = getelementptr i8, ptr %pf.row, i64 %251
  call void @llvm.prefetch.p0(ptr %252, i32 0, i32 3, i32 1)
  %253 = add nsw i64 %pf.line, 1
  br label %pf.line.head

pf.line.exit:                                     ; preds = %pf.line.head
  br label %ld.j.head

ld.j.head:                                        ; preds = %ld.j.body, %pf.line.exit
  %ld.j = phi i64 [ 0, %pf.line.exit ], [ %260, %ld.j.body ]
  %254 = icmp slt i64 %ld.j, %nc29
  br i1 %254, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %255 = add i64 %244, %ld.j
  %256 = getelementptr inbounds float, ptr %win30, i64 %255
  %257 = load float, ptr %256, align 4, !alias.scope !12, !noalias !13
  %258 = add i64 %245, %ld.j
  %259 = getelementptr inbounds float, ptr %buf0, i64 %258
  store float %257, ptr %259, align 4, !alias.scope !13, !noalias !12
  %260 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %261 = add i64 %245, 128
  %262 = add i64 %245, %nc29
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %262, %ld.j.exit ], [ %265, %ld.padc.body ]
  %263 = icmp slt i64 %ld.padc, %261
  br i1 %263, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %264 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %264, align 4, !alias.scope !13, !noalias !12
  %265 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %266 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head31:                                      ; preds = %ld.padc.exit41, %load.strided
  %ld.i34 = phi i64 [ 0, %load.strided ], [ %283, %ld.padc.exit41 ]
  %267 = icmp slt i64 %ld.i34, %nr28
  br i1 %267, label %ld.i.body32, label %ld.i.exit33

ld.i.body32:                                      ; preds = %ld.i.head31
  %268 = mul i64 %ld.i34, %a.stride0
  %269 = mul i64 %ld.i34, 128
  br label %ld.j.head35

ld.i.exit33:                                      ; preds = %ld.i.head31
  br label %load.padrows

ld.j.head35:                                      ; preds = %ld.j.body36, %ld.i.body32
  %ld.j38 = phi i64 [ 0, %ld.i.body32 ], [ %277, %ld.j.body36 ]
  %270 = icmp slt i64 %ld.j38, %nc29
  br i1 %270, label %ld.j.body36, label %ld.j.exit37

ld.j.body36:                                      ; preds = %ld.j.head35
  %271 = mul i64 %ld.j38, %a.stride1
  %272 = add i64 %268, %271
  %273 = getelementptr inbounds float, ptr %win30, i64 %272
  %274 = load float, ptr %273, align 4, !alias.scope !12, !noalias !13
  %275 = add i64 %269, %ld.j38
  %276 = getelementptr inbounds float, ptr %buf0, i64 %275
  store float %274, ptr %276, align 4, !alias.scope !13, !noalias !12
  %277 = add nsw i64 %ld.j38, 1
  br label %ld.j.head35

ld.j.exit37:                                      ; preds = %ld.j.head35
  %278 = add i64 %269, 128
  %279 = add i64 %269, %nc29
  br label %ld.padc.head39

ld.padc.head39:                                   ; preds = %ld.padc.body40, %ld.j.exit37
  %ld.padc42 = phi i64 [ %279, %ld.j.exit37 ], [ %282, %ld.padc.body40 ]
  %280 = icmp slt i64 %ld.padc42, %278
  br i1 %280, label %ld.padc.body40, label %ld.padc.exit41

ld.padc.body40:                                   ; preds = %ld.padc.head39
  %281 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc42
  store float 0.000000e+00, ptr %281, align 4, !alias.scope !13, !noalias !12
  %282 = add nsw i64 %ld.padc42, 1
  br label %ld.padc.head39

ld.padc.exit41:                                   ; preds = %ld.padc.head39
  %283 = add nsw i64 %ld.i34, 1
  br label %ld.i.head31

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %242, %load.padrows ], [ %286, %ld.padr.body ]
  %284 = icmp slt i64 %ld.padr, 4096
  br i1 %284, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %285 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %285, align 4, !alias.scope !13, !noalias !12
  %286 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %oob43 = icmp slt i64 %a.dim0, 0
  br i1 %oob43, label %fail44, label %ok45

fail44:                                           ; preds = %ld.padr.exit
  %err_detail46 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 4398046511104, ptr %err_detail46, align 8
  %287 = getelementptr inbounds i64, ptr %err_detail46, i64 1
  store i64 %a.dim0, ptr %287, align 8
  ret i32 9

ok45:                                             ; preds = %ld.padr.exit
  %288 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %289 = call i64 @llvm.smax.i64(i64 %288, i64 0)
  %290 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %291 = call i64 @llvm.smax.i64(i64 %290, i64 0)
  %292 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %293 = call i64 @llvm.smax.i64(i64 %292, i64 0)
  %294 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %295 = call i64 @llvm.smax.i64(i64 %294, i64 0)
  %296 = mul i64 0, %b.stride0
  %297 = add i64 0, %296
  %298 = mul i64 0, %b.stride1
  %299 = add i64 %297, %298
  %300 = sub i64 %b.dim0, 0
  %301 = call i64 @llvm.smin.i64(i64 %289, i64 %300)
  %302 = call i64 @llvm.smin.i64(i64 %301, i64 32)
  %303 = call i64 @llvm.smax.i64(i64 %302, i64 0)
  %304 = call i64 @llvm.smin.i64(i64 %291, i64 128)
  %305 = call i64 @llvm.smin.i64(i64 %304, i64 128)
  %306 = call i64 @llvm.smax.i64(i64 %305, i64 0)
  %nr47 = select i1 true, i64 %303, i64 0
  %nc48 = select i1 true, i64 %306, i64 0
  %win49 = getelementptr float, ptr %b.data, i64 %299
  %unit50 = icmp eq i64 %b.stride1, 1
  %307 = mul i64 %nc48, 4
  %308 = icmp eq i64 %b.stride0, %nc48
  %pf.bytes54 = select i1 %308, i64 0, i64 %307
  br i1 %unit50, label %load.unit51, label %load.strided52

load.unit51:                                      ; preds = %ok45
  br label %ld.i.head55

load.strided52:                                   ; preds = %ok45
  br label %ld.i.head72

load.padrows53:                                   ; preds = %ld.i.exit74, %ld.i.exit57
  %309 = mul i64 %nr47, 128
  br label %ld.padr.head84

ld.i.head55:                                      ; preds = %ld.padc.exit70, %load.unit51
  %ld.i58 = phi i64 [ 0, %load.unit51 ], [ %333, %ld.padc.exit70 ]
  %310 = icmp slt i64 %ld.i58, %nr47
  br i1 %310, label %ld.i.body56, label %ld.i.exit57

ld.i.body56:                                      ; preds = %ld.i.head55
  %311 = mul i64 %ld.i58, %b.stride0
  %312 = mul i64 %ld.i58, 128
  %313 = mul i64 8, %b.stride0
  %314 = add i64 %311, %313
  %pf.row59 = getelementptr float, ptr %win49, i64 %314
  %315 = add i64 %pf.bytes54, 63
  %316 = lshr i64 %315, 6
  br label %pf.line.head60

ld.i.exit57:                                      ; preds = %ld.i.head55
  br label %load.padrows53

pf.line.head60:                                   ; preds = %pf.line.body61, %ld.i.body56
  %pf.line63 = phi i64 [ 0, %ld.i.body56 ], [ %320, %pf.line.body61 ]
  %317 = icmp slt i64 %pf.line63, %316
  br i1 %317, label %pf.line.body61, label %pf.line.exit62

pf.line.body61:                                   ; preds = %pf.line.head60
  %318 = mul i64 %pf.line63, 64
  %319 = getelementptr i8, ptr %pf.row59, i64 %318
  call void @llvm.prefetch.p0(ptr %319, i32 0, i32 3, i32 1)
  %320 = add nsw i64 %pf.line63, 1
  br label %pf.line.head60

pf.line.exit62:                                   ; preds = %pf.line.head60
  br label %ld.j.head64

ld.j.head64:                                      ; preds = %ld.j.body65, %pf.line.exit62
  %ld.j67 = phi i64 [ 0, %pf.line.exit62 ], [ %327, %ld.j.body65 ]
  %321 = icmp slt i64 %ld.j67, %nc48
  br i1 %321, label %ld.j.body65, label %ld.j.exit66

ld.j.body65:                                      ; preds = %ld.j.head64
  %322 = add i64 %311, %ld.j67
  %323 = getelementptr inbounds float, ptr %win49, i64 %322
  %324 = load float, ptr %323, align 4, !alias.scope !12, !noalias !13
  %325 = add i64 %312, %ld.j67
  %326 = getelementptr inbounds float, ptr %buf1, i64 %325
  store float %324, ptr %326, align 4, !alias.scope !13, !noalias !12
  %327 = add nsw i64 %ld.j67, 1
  br label %ld.j.head64

ld.j.exit66:                                      ; preds = %ld.j.head64
  %328 = add i64 %312, 128
  %329 = add i64 %312, %nc48
  br label %ld.padc.head68

ld.padc.head68:                                   ; preds = %ld.padc.body69, %ld.j.exit66
  %ld.padc71 = phi i64 [ %329, %ld.j.exit66 ], [ %332, %ld.padc.body69 ]
  %330 = icmp slt i64 %ld.padc71, %328
  br i1 %330, label %ld.padc.body69, label %ld.padc.exit70

ld.padc.body69:                                   ; preds = %ld.padc.head68
  %331 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc71
  store float 0.000000e+00, ptr %331, align 4, !alias.scope !13, !noalias !12
  %332 = add nsw i64 %ld.padc71, 1
  br label %ld.padc.head68

ld.padc.exit70:                                   ; preds = %ld.padc.head68
  %333 = add nsw i64 %ld.i58, 1
  br label %ld.i.head55

ld.i.head72:                                      ; preds = %ld.padc.exit82, %load.strided52
  %ld.i75 = phi i64 [ 0, %load.strided52 ], [ %350, %ld.padc.exit82 ]
  %334 = icmp slt i64 %ld.i75, %nr47
  br i1 %334, label %ld.i.body73, label %ld.i.exit74

ld.i.body73:                                      ; preds = %ld.i.head72
  %335 = mul i64 %ld.i75, %b.stride0
  %336 = mul i64 %ld.i75, 128
  br label %ld.j.head76

ld.i.exit74:                                      ; preds = %ld.i.head72
  br label %load.padrows53

ld.j.head76:                                      ; preds = %ld.j.body77, %ld.i.body73
  %ld.j79 = phi i64 [ 0, %ld.i.body73 ], [ %344, %ld.j.body77 ]
  %337 = icmp slt i64 %ld.j79, %nc48
  br i1 %337, label %ld.j.body77, label %ld.j.exit78

ld.j.body77:                                      ; preds = %ld.j.head76
  %338 = mul i64 %ld.j79, %b.stride1
  %339 = add i64 %335, %338
  %340 = getelementptr inbounds float, ptr %win49, i64 %339
  %341 = load float, ptr %340, align 4, !alias.scope !12, !noalias !13
  %342 = add i64 %336, %ld.j79
  %343 = getelementptr inbounds float, ptr %buf1, i64 %342
  store float %341, ptr %343, align 4, !alias.scope !13, !noalias !12
  %344 = add nsw i64 %ld.j79, 1
  br label %ld.j.head76

ld.j.exit78:                                      ; preds = %ld.j.head76
  %345 = add i64 %336, 128
  %346 = add i64 %336, %nc48
  br label %ld.padc.head80

ld.padc.head80:                                   ; preds = %ld.padc.body81, %ld.j.exit78
  %ld.padc83 = phi i64 [ %346, %ld.j.exit78 ], [ %349, %ld.padc.body81 ]
  %347 = icmp slt i64 %ld.padc83, %345
  br i1 %347, label %ld.padc.body81, label %ld.padc.exit82

ld.padc.body81:                                   ; preds = %ld.padc.head80
  %348 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc83
  store float 0.000000e+00, ptr %348, align 4, !alias.scope !13, !noalias !12
  %349 = add nsw i64 %ld.padc83, 1
  br label %ld.padc.head80

ld.padc.exit82:                                   ; preds = %ld.padc.head80
  %350 = add nsw i64 %ld.i75, 1
  br label %ld.i.head72

ld.padr.head84:                                   ; preds = %ld.padr.body85, %load.padrows53
  %ld.padr87 = phi i64 [ %309, %load.padrows53 ], [ %353, %ld.padr.body85 ]
  %351 = icmp slt i64 %ld.padr87, 4096
  br i1 %351, label %ld.padr.body85, label %ld.padr.exit86

ld.padr.body85:                                   ; preds = %ld.padr.head84
  %352 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr87
  store float 0.000000e+00, ptr %352, align 4, !alias.scope !13, !noalias !12
  %353 = add nsw i64 %ld.padr87, 1
  br label %ld.padr.head84

ld.padr.exit86:                                   ; preds = %ld.padr.head84
  %354 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %355 = call i64 @llvm.smax.i64(i64 %354, i64 0)
  %356 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %357 = call i64 @llvm.smax.i64(i64 %356, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit86
  %ew = phi i64 [ 0, %ld.padr.exit86 ], [ %365, %ew.body ]
  %358 = icmp slt i64 %ew, 4096
  br i1 %358, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %359 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %360 = load float, ptr %359, align 4, !alias.scope !13, !noalias !12
  %361 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %362 = load float, ptr %361, align 4, !alias.scope !13, !noalias !12
  %363 = fadd float %360, %362
  %364 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %363, ptr %364, align 4, !alias.scope !13, !noalias !12
  %365 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %366 = mul i64 0, %c.stride0
  %367 = add i64 0, %366
  %368 = mul i64 0, %c.stride1
  %369 = add i64 %367, %368
  %370 = sub i64 %c.dim0, 0
  %371 = call i64 @llvm.smin.i64(i64 %355, i64 %370)
  %372 = call i64 @llvm.smin.i64(i64 %371, i64 32)
  %373 = call i64 @llvm.smax.i64(i64 %372, i64 0)
  %374 = call i64 @llvm.smin.i64(i64 %357, i64 128)
  %375 = call i64 @llvm.smin.i64(i64 %374, i64 128)
  %376 = call i64 @llvm.smax.i64(i64 %375, i64 0)
  %nr88 = select i1 true, i64 %373, i64 0
  %nc89 = select i1 true, i64 %376, i64 0
  %win90 = getelementptr float, ptr %c.data, i64 %369
  %unit91 = icmp eq i64 %c.stride1, 1
  br i1 %unit91, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head92

store.done:                                       ; preds = %st.i.exit94, %st.i.exit
  br label %stream.done

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %387, %st.j.exit ]
  %377 = icmp slt i64 %st.i, %nr88
  br i1 %377, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %378 = mul i64 %st.i, %c.stride0
  %379 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %386, %st.j.body ]
  %380 = icmp slt i64 %st.j, %nc89
  br i1 %380, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %381 = add i64 %379, %st.j
  %382 = getelementptr inbounds float, ptr %buf0, i64 %381
  %383 = load float, ptr %382, align 4, !alias.scope !13, !noalias !12
  %384 = add i64 %378, %st.j
  %385 = getelementptr inbounds float, ptr %win90, i64 %384
  store float %383, ptr %385, align 4, !alias.scope !12, !noalias !13
  %386 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %387 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head92:                                      ; preds = %st.j.exit98, %store.strided
  %st.i95 = phi i64 [ 0, %store.strided ], [ %399, %st.j.exit98 ]
  %388 = icmp slt i64 %st.i95, %nr88
  br i1 %388, label %st.i.body93, label %st.i.exit94

st.i.body93:                                      ; preds = %st.i.head92
  %389 = mul i64 %st.i95, %c.stride0
  %390 = mul i64 %st.i95, 128
  br label %st.j.head96

st.i.exit94:                                      ; preds = %st.i.head92
  br label %store.done

st.j.head96:                                      ; preds = %st.j.body97, %st.i.body93
  %st.j99 = phi i64 [ 0, %st.i.body93 ], [ %398, %st.j.body97 ]
  %391 = icmp slt i64 %st.j99, %nc89
  br i1 %391, label %st.j.body97, label %st.j.exit98

st.j.body97:                                      ; preds = %st.j.head96
  %392 = add i64 %390, %st.j99
  %393 = getelementptr inbounds float, ptr %buf0, i64 %392
  %394 = load float, ptr %393, align 4, !alias.scope !13, !noalias !12
  %395 = mul i64 %st.j99, %c.stride1
  %396 = add i64 %389, %395
  %397 = getelementptr inbounds float, ptr %win90, i64 %396
  store float %394, ptr %397, align 4, !alias.scope !12, !noalias !13
  %398 = add nsw i64 %st.j99, 1
  br label %st.j.head96

st.j.exit98:                                      ; preds = %st.j.head96
  %399 = add nsw i64 %st.i95, 1
  br label %st.i.head92

after.return:                                     ; No predecessors!
  ret i32 0
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smin.i64(i64, i64) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

; Function Attrs: nounwind
declare void @llvm.x86.sse.sfence() #2

; Function Attrs: nocallback nofree nosync nounwind willreturn memory(argmem: readwrite, inaccessiblemem: readwrite)
declare void @llvm.prefetch.p0(ptr nocapture readonly, i32 immarg, i32 immarg, i32 immarg) #3

attributes #0 = { nounwind "prefer-vector-width"="512" }
attributes #1 = { nocallback nofree nosync nounwind speculatable willreturn memory(none) }
attributes #2 = { nounwind }
attributes #3 = { nocallback nofree nosync nounwind willreturn memory(argmem: readwrite, inaccessiblemem: readwrite) }

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
