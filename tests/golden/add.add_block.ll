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
  %25 = icmp sge i64 %a.dim0, 33
  %26 = icmp slt i64 %a.dim0, 0
  %oob = or i1 %26, %25
  br i1 %oob, label %fail7, label %ok8

fail7:                                            ; preds = %ok5
  %err_detail9 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 0, ptr %err_detail9, align 8
  %27 = getelementptr inbounds i64, ptr %err_detail9, i64 1
  store i64 %a.dim0, ptr %27, align 8
  ret i32 9

ok8:                                              ; preds = %ok5
  %28 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %29 = call i64 @llvm.smax.i64(i64 %28, i64 0)
  %30 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %31 = call i64 @llvm.smax.i64(i64 %30, i64 0)
  %32 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %33 = call i64 @llvm.smax.i64(i64 %32, i64 0)
  %34 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %35 = call i64 @llvm.smax.i64(i64 %34, i64 0)
  %36 = mul i64 0, %a.stride0
  %37 = add i64 0, %36
  %38 = mul i64 0, %a.stride1
  %39 = add i64 %37, %38
  %40 = sub i64 %a.dim0, 0
  %41 = call i64 @llvm.smin.i64(i64 %29, i64 %40)
  %42 = call i64 @llvm.smin.i64(i64 %41, i64 32)
  %43 = call i64 @llvm.smax.i64(i64 %42, i64 0)
  %44 = call i64 @llvm.smin.i64(i64 %31, i64 128)
  %45 = call i64 @llvm.smin.i64(i64 %44, i64 128)
  %46 = call i64 @llvm.smax.i64(i64 %45, i64 0)
  %nr = select i1 true, i64 %43, i64 0
  %nc = select i1 true, i64 %46, i64 0
  %win = getelementptr float, ptr %a.data, i64 %39
  %47 = icmp sge i64 %a.dim0, 33
  %48 = icmp slt i64 %a.dim0, 0
  %oob10 = or i1 %48, %47
  br i1 %oob10, label %fail11, label %ok12

fail11:                                           ; preds = %ok8
  %err_detail13 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 4398046511104, ptr %err_detail13, align 8
  %49 = getelementptr inbounds i64, ptr %err_detail13, i64 1
  store i64 %a.dim0, ptr %49, align 8
  ret i32 9

ok12:                                             ; preds = %ok8
  %50 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %51 = call i64 @llvm.smax.i64(i64 %50, i64 0)
  %52 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %53 = call i64 @llvm.smax.i64(i64 %52, i64 0)
  %54 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %55 = call i64 @llvm.smax.i64(i64 %54, i64 0)
  %56 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %57 = call i64 @llvm.smax.i64(i64 %56, i64 0)
  %58 = mul i64 0, %b.stride0
  %59 = add i64 0, %58
  %60 = mul i64 0, %b.stride1
  %61 = add i64 %59, %60
  %62 = sub i64 %b.dim0, 0
  %63 = call i64 @llvm.smin.i64(i64 %51, i64 %62)
  %64 = call i64 @llvm.smin.i64(i64 %63, i64 32)
  %65 = call i64 @llvm.smax.i64(i64 %64, i64 0)
  %66 = call i64 @llvm.smin.i64(i64 %53, i64 128)
  %67 = call i64 @llvm.smin.i64(i64 %66, i64 128)
  %68 = call i64 @llvm.smax.i64(i64 %67, i64 0)
  %nr14 = select i1 true, i64 %65, i64 0
  %nc15 = select i1 true, i64 %68, i64 0
  %win16 = getelementptr float, ptr %b.data, i64 %61
  %69 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %70 = call i64 @llvm.smax.i64(i64 %69, i64 0)
  %71 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %72 = call i64 @llvm.smax.i64(i64 %71, i64 0)
  %73 = mul i64 0, %c.stride0
  %74 = add i64 0, %73
  %75 = mul i64 0, %c.stride1
  %76 = add i64 %74, %75
  %77 = sub i64 %c.dim0, 0
  %78 = call i64 @llvm.smin.i64(i64 %70, i64 %77)
  %79 = call i64 @llvm.smin.i64(i64 %78, i64 32)
  %80 = call i64 @llvm.smax.i64(i64 %79, i64 0)
  %81 = call i64 @llvm.smin.i64(i64 %72, i64 128)
  %82 = call i64 @llvm.smin.i64(i64 %81, i64 128)
  %83 = call i64 @llvm.smax.i64(i64 %82, i64 0)
  %nr17 = select i1 true, i64 %80, i64 0
  %nc18 = select i1 true, i64 %83, i64 0
  %win19 = getelementptr float, ptr %c.data, i64 %76
  %84 = icmp sge i64 %c.stride0, 0
  %85 = icmp eq i64 %c.stride1, 1
  %86 = and i1 %85, %84
  %87 = sub i64 %nr17, 1
  %88 = mul i64 %87, %c.stride0
  %89 = add i64 %88, %nc18
  %90 = icmp eq i64 %nc18, 0
  %91 = icmp eq i64 %nr17, 0
  %92 = or i1 %91, %90
  %93 = select i1 %92, i64 0, i64 %89
  %94 = ptrtoint ptr %win19 to i64
  %95 = mul i64 %93, 4
  %96 = add i64 %94, %95
  %97 = icmp eq i64 %a.stride1, 1
  %98 = and i1 %86, %97
  %99 = icmp sge i64 %a.stride0, 0
  %100 = and i1 %98, %99
  %101 = icmp sge i64 %nr, %nr17
  %102 = and i1 %100, %101
  %103 = icmp sge i64 %nc, %nc18
  %104 = and i1 %102, %103
  %105 = sub i64 %nr17, 1
  %106 = mul i64 %105, %a.stride0
  %107 = add i64 %106, %nc18
  %108 = icmp eq i64 %nc18, 0
  %109 = icmp eq i64 %nr17, 0
  %110 = or i1 %109, %108
  %111 = select i1 %110, i64 0, i64 %107
  %112 = ptrtoint ptr %win to i64
  %113 = mul i64 %111, 4
  %114 = add i64 %112, %113
  %115 = icmp ule i64 %96, %112
  %116 = icmp ule i64 %114, %94
  %117 = or i1 %116, %115
  %118 = and i1 %104, %117
  %119 = icmp eq i64 %b.stride1, 1
  %120 = and i1 %118, %119
  %121 = icmp sge i64 %b.stride0, 0
  %122 = and i1 %120, %121
  %123 = icmp sge i64 %nr14, %nr17
  %124 = and i1 %122, %123
  %125 = icmp sge i64 %nc15, %nc18
  %126 = and i1 %124, %125
  %127 = sub i64 %nr17, 1
  %128 = mul i64 %127, %b.stride0
  %129 = add i64 %128, %nc18
  %130 = icmp eq i64 %nc18, 0
  %131 = icmp eq i64 %nr17, 0
  %132 = or i1 %131, %130
  %133 = select i1 %132, i64 0, i64 %129
  %134 = ptrtoint ptr %win16 to i64
  %135 = mul i64 %133, 4
  %136 = add i64 %134, %135
  %137 = icmp ule i64 %96, %134
  %138 = icmp ule i64 %136, %94
  %139 = or i1 %138, %137
  %140 = and i1 %126, %139
  br i1 %140, label %stream, label %stream.buffered

stream:                                           ; preds = %ok12
  br i1 %stream_stores, label %stream.nt, label %stream.cached

stream.buffered:                                  ; preds = %ok12
  %141 = icmp sge i64 %a.dim0, 33
  %142 = icmp slt i64 %a.dim0, 0
  %oob24 = or i1 %142, %141
  br i1 %oob24, label %fail25, label %ok26

stream.done:                                      ; preds = %store.done, %sm.i.exit, %sm.nt.i.exit
  ret i32 0

stream.nt:                                        ; preds = %stream
  br label %sm.nt.i.head

stream.cached:                                    ; preds = %stream
  br label %sm.i.head

sm.nt.i.head:                                     ; preds = %sm.j.exit, %stream.nt
  %sm.nt.i = phi i64 [ 0, %stream.nt ], [ %207, %sm.j.exit ]
  %143 = icmp slt i64 %sm.nt.i, %nr17
  br i1 %143, label %sm.nt.i.body, label %sm.nt.i.exit

sm.nt.i.body:                                     ; preds = %sm.nt.i.head
  %144 = mul i64 %sm.nt.i, 128
  %145 = mul i64 %sm.nt.i, %c.stride0
  %146 = getelementptr float, ptr %win19, i64 %145
  %147 = ptrtoint ptr %146 to i64
  %148 = and i64 %147, 63
  %149 = sub i64 64, %148
  %150 = and i64 %149, 63
  %151 = lshr i64 %150, 2
  %152 = and i64 %147, 3
  %153 = icmp ne i64 %152, 0
  %154 = select i1 %153, i64 %nc18, i64 %151
  %155 = call i64 @llvm.smin.i64(i64 %154, i64 %nc18)
  br label %sm.peel.head

sm.nt.i.exit:                                     ; preds = %sm.nt.i.head
  call void @llvm.x86.sse.sfence()
  br label %stream.done

sm.peel.head:                                     ; preds = %sm.peel.body, %sm.nt.i.body
  %sm.peel = phi i64 [ 0, %sm.nt.i.body ], [ %170, %sm.peel.body ]
  %156 = icmp slt i64 %sm.peel, %155
  br i1 %156, label %sm.peel.body, label %sm.peel.exit

sm.peel.body:                                     ; preds = %sm.peel.head
  %157 = mul i64 %sm.nt.i, %a.stride0
  %158 = add i64 %157, %sm.peel
  %159 = getelementptr inbounds float, ptr %win, i64 %158
  %160 = load float, ptr %159, align 4, !alias.scope !2, !noalias !6
  %161 = mul i64 %sm.nt.i, %b.stride0
  %162 = add i64 %161, %sm.peel
  %163 = getelementptr inbounds float, ptr %win16, i64 %162
  %164 = load float, ptr %163, align 4, !alias.scope !2, !noalias !6
  %165 = add i64 %144, %sm.peel
  %166 = fadd float %160, %164
  %167 = mul i64 %sm.nt.i, %c.stride0
  %168 = add i64 %167, %sm.peel
  %169 = getelementptr inbounds float, ptr %win19, i64 %168
  store float %166, ptr %169, align 4, !alias.scope !9, !noalias !10
  %170 = add nsw i64 %sm.peel, 1
  br label %sm.peel.head

sm.peel.exit:                                     ; preds = %sm.peel.head
  %171 = sub i64 %nc18, %155
  %172 = sdiv i64 %171, 16
  br label %sm.ntv.head

sm.ntv.head:                                      ; preds = %sm.ntv.body, %sm.peel.exit
  %sm.ntv = phi i64 [ 0, %sm.peel.exit ], [ %189, %sm.ntv.body ]
  %173 = icmp slt i64 %sm.ntv, %172
  br i1 %173, label %sm.ntv.body, label %sm.ntv.exit

sm.ntv.body:                                      ; preds = %sm.ntv.head
  %174 = mul i64 %sm.ntv, 16
  %175 = add i64 %155, %174
  %176 = mul i64 %sm.nt.i, %a.stride0
  %177 = add i64 %176, %175
  %178 = getelementptr inbounds float, ptr %win, i64 %177
  %179 = load <16 x float>, ptr %178, align 4, !alias.scope !2, !noalias !6
  %180 = mul i64 %sm.nt.i, %b.stride0
  %181 = add i64 %180, %175
  %182 = getelementptr inbounds float, ptr %win16, i64 %181
  %183 = load <16 x float>, ptr %182, align 4, !alias.scope !2, !noalias !6
  %184 = add i64 %144, %175
  %185 = fadd <16 x float> %179, %183
  %186 = mul i64 %sm.nt.i, %c.stride0
  %187 = add i64 %186, %175
  %188 = getelementptr inbounds float, ptr %win19, i64 %187
  store <16 x float> %185, ptr %188, align 64, !alias.scope !9, !noalias !10, !nontemporal !11
  %189 = add nsw i64 %sm.ntv, 1
  br label %sm.ntv.head

sm.ntv.exit:                                      ; preds = %sm.ntv.head
  %190 = mul i64 %172, 16
  %191 = add i64 %155, %190
  br label %sm.j.head

sm.j.head:                                        ; preds = %sm.j.body, %sm.ntv.exit
  %sm.j = phi i64 [ %191, %sm.ntv.exit ], [ %206, %sm.j.body ]
  %192 = icmp slt i64 %sm.j, %nc18
  br i1 %192, label %sm.j.body, label %sm.j.exit

sm.j.body:                                        ; preds = %sm.j.head
  %193 = mul i64 %sm.nt.i, %a.stride0
  %194 = add i64 %193, %sm.j
  %195 = getelementptr inbounds float, ptr %win, i64 %194
  %196 = load float, ptr %195, align 4, !alias.scope !2, !noalias !6
  %197 = mul i64 %sm.nt.i, %b.stride0
  %198 = add i64 %197, %sm.j
  %199 = getelementptr inbounds float, ptr %win16, i64 %198
  %200 = load float, ptr %199, align 4, !alias.scope !2, !noalias !6
  %201 = add i64 %144, %sm.j
  %202 = fadd float %196, %200
  %203 = mul i64 %sm.nt.i, %c.stride0
  %204 = add i64 %203, %sm.j
  %205 = getelementptr inbounds float, ptr %win19, i64 %204
  store float %202, ptr %205, align 4, !alias.scope !9, !noalias !10
  %206 = add nsw i64 %sm.j, 1
  br label %sm.j.head

sm.j.exit:                                        ; preds = %sm.j.head
  %207 = add nsw i64 %sm.nt.i, 1
  br label %sm.nt.i.head

sm.i.head:                                        ; preds = %sm.j.exit22, %stream.cached
  %sm.i = phi i64 [ 0, %stream.cached ], [ %225, %sm.j.exit22 ]
  %208 = icmp slt i64 %sm.i, %nr17
  br i1 %208, label %sm.i.body, label %sm.i.exit

sm.i.body:                                        ; preds = %sm.i.head
  %209 = mul i64 %sm.i, 128
  br label %sm.j.head20

sm.i.exit:                                        ; preds = %sm.i.head
  br label %stream.done

sm.j.head20:                                      ; preds = %sm.j.body21, %sm.i.body
  %sm.j23 = phi i64 [ 0, %sm.i.body ], [ %224, %sm.j.body21 ]
  %210 = icmp slt i64 %sm.j23, %nc18
  br i1 %210, label %sm.j.body21, label %sm.j.exit22

sm.j.body21:                                      ; preds = %sm.j.head20
  %211 = mul i64 %sm.i, %a.stride0
  %212 = add i64 %211, %sm.j23
  %213 = getelementptr inbounds float, ptr %win, i64 %212
  %214 = load float, ptr %213, align 4, !alias.scope !2, !noalias !6
  %215 = mul i64 %sm.i, %b.stride0
  %216 = add i64 %215, %sm.j23
  %217 = getelementptr inbounds float, ptr %win16, i64 %216
  %218 = load float, ptr %217, align 4, !alias.scope !2, !noalias !6
  %219 = add i64 %209, %sm.j23
  %220 = fadd float %214, %218
  %221 = mul i64 %sm.i, %c.stride0
  %222 = add i64 %221, %sm.j23
  %223 = getelementptr inbounds float, ptr %win19, i64 %222
  store float %220, ptr %223, align 4, !alias.scope !9, !noalias !10
  %224 = add nsw i64 %sm.j23, 1
  br label %sm.j.head20

sm.j.exit22:                                      ; preds = %sm.j.head20
  %225 = add nsw i64 %sm.i, 1
  br label %sm.i.head

fail25:                                           ; preds = %stream.buffered
  %err_detail27 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 0, ptr %err_detail27, align 8
  %226 = getelementptr inbounds i64, ptr %err_detail27, i64 1
  store i64 %a.dim0, ptr %226, align 8
  ret i32 9

ok26:                                             ; preds = %stream.buffered
  %227 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %228 = call i64 @llvm.smax.i64(i64 %227, i64 0)
  %229 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %230 = call i64 @llvm.smax.i64(i64 %229, i64 0)
  %231 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %232 = call i64 @llvm.smax.i64(i64 %231, i64 0)
  %233 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %234 = call i64 @llvm.smax.i64(i64 %233, i64 0)
  %235 = mul i64 0, %a.stride0
  %236 = add i64 0, %235
  %237 = mul i64 0, %a.stride1
  %238 = add i64 %236, %237
  %239 = sub i64 %a.dim0, 0
  %240 = call i64 @llvm.smin.i64(i64 %228, i64 %239)
  %241 = call i64 @llvm.smin.i64(i64 %240, i64 32)
  %242 = call i64 @llvm.smax.i64(i64 %241, i64 0)
  %243 = call i64 @llvm.smin.i64(i64 %230, i64 128)
  %244 = call i64 @llvm.smin.i64(i64 %243, i64 128)
  %245 = call i64 @llvm.smax.i64(i64 %244, i64 0)
  %nr28 = select i1 true, i64 %242, i64 0
  %nc29 = select i1 true, i64 %245, i64 0
  %win30 = getelementptr float, ptr %a.data, i64 %238
  %unit = icmp eq i64 %a.stride1, 1
  %246 = mul i64 %nc29, 4
  %247 = icmp eq i64 %a.stride0, %nc29
  %pf.bytes = select i1 %247, i64 0, i64 %246
  br i1 %unit, label %load.unit, label %load.strided

load.unit:                                        ; preds = %ok26
  br label %ld.i.head

load.strided:                                     ; preds = %ok26
  br label %ld.i.head31

load.padrows:                                     ; preds = %ld.i.exit33, %ld.i.exit
  %248 = mul i64 %nr28, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %272, %ld.padc.exit ]
  %249 = icmp slt i64 %ld.i, %nr28
  br i1 %249, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %250 = mul i64 %ld.i, %a.stride0
  %251 = mul i64 %ld.i, 128
  %252 = mul i64 8, %a.stride0
  %253 = add i64 %250, %252
  %pf.row = getelementptr float, ptr %win30, i64 %253
  %254 = add i64 %pf.bytes, 63
  %255 = lshr i64 %254, 6
  br label %pf.line.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

pf.line.head:                                     ; preds = %pf.line.body, %ld.i.body
  %pf.line = phi i64 [ 0, %ld.i.body ], [ %259, %pf.line.body ]
  %256 = icmp slt i64 %pf.line, %255
  br i1 %256, label %pf.line.body, label %pf.line.exit

pf.line.body:                                     ; preds = %pf.line.head
  %257 = mul i64 %pf.line, 64
  %258 = getelementptr i8, ptr %pf.row, i64 %257
  call void @llvm.prefetch.p0(ptr %258, i32 0, i32 3, i32 1)
  %259 = add nsw i64 %pf.line, 1
  br label %pf.line.head

pf.line.exit:                                     ; preds = %pf.line.head
  br label %ld.j.head

ld.j.head:                                        ; preds = %ld.j.body, %pf.line.exit
  %ld.j = phi i64 [ 0, %pf.line.exit ], [ %266, %ld.j.body ]
  %260 = icmp slt i64 %ld.j, %nc29
  br i1 %260, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %261 = add i64 %250, %ld.j
  %262 = getelementptr inbounds float, ptr %win30, i64 %261
  %263 = load float, ptr %262, align 4, !alias.scope !12, !noalias !13
  %264 = add i64 %251, %ld.j
  %265 = getelementptr inbounds float, ptr %buf0, i64 %264
  store float %263, ptr %265, align 4, !alias.scope !13, !noalias !12
  %266 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %267 = add i64 %251, 128
  %268 = add i64 %251, %nc29
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %268, %ld.j.exit ], [ %271, %ld.padc.body ]
  %269 = icmp slt i64 %ld.padc, %267
  br i1 %269, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %270 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %270, align 4, !alias.scope !13, !noalias !12
  %271 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %272 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head31:                                      ; preds = %ld.padc.exit41, %load.strided
  %ld.i34 = phi i64 [ 0, %load.strided ], [ %289, %ld.padc.exit41 ]
  %273 = icmp slt i64 %ld.i34, %nr28
  br i1 %273, label %ld.i.body32, label %ld.i.exit33

ld.i.body32:                                      ; preds = %ld.i.head31
  %274 = mul i64 %ld.i34, %a.stride0
  %275 = mul i64 %ld.i34, 128
  br label %ld.j.head35

ld.i.exit33:                                      ; preds = %ld.i.head31
  br label %load.padrows

ld.j.head35:                                      ; preds = %ld.j.body36, %ld.i.body32
  %ld.j38 = phi i64 [ 0, %ld.i.body32 ], [ %283, %ld.j.body36 ]
  %276 = icmp slt i64 %ld.j38, %nc29
  br i1 %276, label %ld.j.body36, label %ld.j.exit37

ld.j.body36:                                      ; preds = %ld.j.head35
  %277 = mul i64 %ld.j38, %a.stride1
  %278 = add i64 %274, %277
  %279 = getelementptr inbounds float, ptr %win30, i64 %278
  %280 = load float, ptr %279, align 4, !alias.scope !12, !noalias !13
  %281 = add i64 %275, %ld.j38
  %282 = getelementptr inbounds float, ptr %buf0, i64 %281
  store float %280, ptr %282, align 4, !alias.scope !13, !noalias !12
  %283 = add nsw i64 %ld.j38, 1
  br label %ld.j.head35

ld.j.exit37:                                      ; preds = %ld.j.head35
  %284 = add i64 %275, 128
  %285 = add i64 %275, %nc29
  br label %ld.padc.head39

ld.padc.head39:                                   ; preds = %ld.padc.body40, %ld.j.exit37
  %ld.padc42 = phi i64 [ %285, %ld.j.exit37 ], [ %288, %ld.padc.body40 ]
  %286 = icmp slt i64 %ld.padc42, %284
  br i1 %286, label %ld.padc.body40, label %ld.padc.exit41

ld.padc.body40:                                   ; preds = %ld.padc.head39
  %287 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc42
  store float 0.000000e+00, ptr %287, align 4, !alias.scope !13, !noalias !12
  %288 = add nsw i64 %ld.padc42, 1
  br label %ld.padc.head39

ld.padc.exit41:                                   ; preds = %ld.padc.head39
  %289 = add nsw i64 %ld.i34, 1
  br label %ld.i.head31

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %248, %load.padrows ], [ %292, %ld.padr.body ]
  %290 = icmp slt i64 %ld.padr, 4096
  br i1 %290, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %291 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %291, align 4, !alias.scope !13, !noalias !12
  %292 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %293 = icmp sge i64 %a.dim0, 33
  %294 = icmp slt i64 %a.dim0, 0
  %oob43 = or i1 %294, %293
  br i1 %oob43, label %fail44, label %ok45

fail44:                                           ; preds = %ld.padr.exit
  %err_detail46 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 4398046511104, ptr %err_detail46, align 8
  %295 = getelementptr inbounds i64, ptr %err_detail46, i64 1
  store i64 %a.dim0, ptr %295, align 8
  ret i32 9

ok45:                                             ; preds = %ld.padr.exit
  %296 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %297 = call i64 @llvm.smax.i64(i64 %296, i64 0)
  %298 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %299 = call i64 @llvm.smax.i64(i64 %298, i64 0)
  %300 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %301 = call i64 @llvm.smax.i64(i64 %300, i64 0)
  %302 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %303 = call i64 @llvm.smax.i64(i64 %302, i64 0)
  %304 = mul i64 0, %b.stride0
  %305 = add i64 0, %304
  %306 = mul i64 0, %b.stride1
  %307 = add i64 %305, %306
  %308 = sub i64 %b.dim0, 0
  %309 = call i64 @llvm.smin.i64(i64 %297, i64 %308)
  %310 = call i64 @llvm.smin.i64(i64 %309, i64 32)
  %311 = call i64 @llvm.smax.i64(i64 %310, i64 0)
  %312 = call i64 @llvm.smin.i64(i64 %299, i64 128)
  %313 = call i64 @llvm.smin.i64(i64 %312, i64 128)
  %314 = call i64 @llvm.smax.i64(i64 %313, i64 0)
  %nr47 = select i1 true, i64 %311, i64 0
  %nc48 = select i1 true, i64 %314, i64 0
  %win49 = getelementptr float, ptr %b.data, i64 %307
  %unit50 = icmp eq i64 %b.stride1, 1
  %315 = mul i64 %nc48, 4
  %316 = icmp eq i64 %b.stride0, %nc48
  %pf.bytes54 = select i1 %316, i64 0, i64 %315
  br i1 %unit50, label %load.unit51, label %load.strided52

load.unit51:                                      ; preds = %ok45
  br label %ld.i.head55

load.strided52:                                   ; preds = %ok45
  br label %ld.i.head72

load.padrows53:                                   ; preds = %ld.i.exit74, %ld.i.exit57
  %317 = mul i64 %nr47, 128
  br label %ld.padr.head84

ld.i.head55:                                      ; preds = %ld.padc.exit70, %load.unit51
  %ld.i58 = phi i64 [ 0, %load.unit51 ], [ %341, %ld.padc.exit70 ]
  %318 = icmp slt i64 %ld.i58, %nr47
  br i1 %318, label %ld.i.body56, label %ld.i.exit57

ld.i.body56:                                      ; preds = %ld.i.head55
  %319 = mul i64 %ld.i58, %b.stride0
  %320 = mul i64 %ld.i58, 128
  %321 = mul i64 8, %b.stride0
  %322 = add i64 %319, %321
  %pf.row59 = getelementptr float, ptr %win49, i64 %322
  %323 = add i64 %pf.bytes54, 63
  %324 = lshr i64 %323, 6
  br label %pf.line.head60

ld.i.exit57:                                      ; preds = %ld.i.head55
  br label %load.padrows53

pf.line.head60:                                   ; preds = %pf.line.body61, %ld.i.body56
  %pf.line63 = phi i64 [ 0, %ld.i.body56 ], [ %328, %pf.line.body61 ]
  %325 = icmp slt i64 %pf.line63, %324
  br i1 %325, label %pf.line.body61, label %pf.line.exit62

pf.line.body61:                                   ; preds = %pf.line.head60
  %326 = mul i64 %pf.line63, 64
  %327 = getelementptr i8, ptr %pf.row59, i64 %326
  call void @llvm.prefetch.p0(ptr %327, i32 0, i32 3, i32 1)
  %328 = add nsw i64 %pf.line63, 1
  br label %pf.line.head60

pf.line.exit62:                                   ; preds = %pf.line.head60
  br label %ld.j.head64

ld.j.head64:                                      ; preds = %ld.j.body65, %pf.line.exit62
  %ld.j67 = phi i64 [ 0, %pf.line.exit62 ], [ %335, %ld.j.body65 ]
  %329 = icmp slt i64 %ld.j67, %nc48
  br i1 %329, label %ld.j.body65, label %ld.j.exit66

ld.j.body65:                                      ; preds = %ld.j.head64
  %330 = add i64 %319, %ld.j67
  %331 = getelementptr inbounds float, ptr %win49, i64 %330
  %332 = load float, ptr %331, align 4, !alias.scope !12, !noalias !13
  %333 = add i64 %320, %ld.j67
  %334 = getelementptr inbounds float, ptr %buf1, i64 %333
  store float %332, ptr %334, align 4, !alias.scope !13, !noalias !12
  %335 = add nsw i64 %ld.j67, 1
  br label %ld.j.head64

ld.j.exit66:                                      ; preds = %ld.j.head64
  %336 = add i64 %320, 128
  %337 = add i64 %320, %nc48
  br label %ld.padc.head68

ld.padc.head68:                                   ; preds = %ld.padc.body69, %ld.j.exit66
  %ld.padc71 = phi i64 [ %337, %ld.j.exit66 ], [ %340, %ld.padc.body69 ]
  %338 = icmp slt i64 %ld.padc71, %336
  br i1 %338, label %ld.padc.body69, label %ld.padc.exit70

ld.padc.body69:                                   ; preds = %ld.padc.head68
  %339 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc71
  store float 0.000000e+00, ptr %339, align 4, !alias.scope !13, !noalias !12
  %340 = add nsw i64 %ld.padc71, 1
  br label %ld.padc.head68

ld.padc.exit70:                                   ; preds = %ld.padc.head68
  %341 = add nsw i64 %ld.i58, 1
  br label %ld.i.head55

ld.i.head72:                                      ; preds = %ld.padc.exit82, %load.strided52
  %ld.i75 = phi i64 [ 0, %load.strided52 ], [ %358, %ld.padc.exit82 ]
  %342 = icmp slt i64 %ld.i75, %nr47
  br i1 %342, label %ld.i.body73, label %ld.i.exit74

ld.i.body73:                                      ; preds = %ld.i.head72
  %343 = mul i64 %ld.i75, %b.stride0
  %344 = mul i64 %ld.i75, 128
  br label %ld.j.head76

ld.i.exit74:                                      ; preds = %ld.i.head72
  br label %load.padrows53

ld.j.head76:                                      ; preds = %ld.j.body77, %ld.i.body73
  %ld.j79 = phi i64 [ 0, %ld.i.body73 ], [ %352, %ld.j.body77 ]
  %345 = icmp slt i64 %ld.j79, %nc48
  br i1 %345, label %ld.j.body77, label %ld.j.exit78

ld.j.body77:                                      ; preds = %ld.j.head76
  %346 = mul i64 %ld.j79, %b.stride1
  %347 = add i64 %343, %346
  %348 = getelementptr inbounds float, ptr %win49, i64 %347
  %349 = load float, ptr %348, align 4, !alias.scope !12, !noalias !13
  %350 = add i64 %344, %ld.j79
  %351 = getelementptr inbounds float, ptr %buf1, i64 %350
  store float %349, ptr %351, align 4, !alias.scope !13, !noalias !12
  %352 = add nsw i64 %ld.j79, 1
  br label %ld.j.head76

ld.j.exit78:                                      ; preds = %ld.j.head76
  %353 = add i64 %344, 128
  %354 = add i64 %344, %nc48
  br label %ld.padc.head80

ld.padc.head80:                                   ; preds = %ld.padc.body81, %ld.j.exit78
  %ld.padc83 = phi i64 [ %354, %ld.j.exit78 ], [ %357, %ld.padc.body81 ]
  %355 = icmp slt i64 %ld.padc83, %353
  br i1 %355, label %ld.padc.body81, label %ld.padc.exit82

ld.padc.body81:                                   ; preds = %ld.padc.head80
  %356 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc83
  store float 0.000000e+00, ptr %356, align 4, !alias.scope !13, !noalias !12
  %357 = add nsw i64 %ld.padc83, 1
  br label %ld.padc.head80

ld.padc.exit82:                                   ; preds = %ld.padc.head80
  %358 = add nsw i64 %ld.i75, 1
  br label %ld.i.head72

ld.padr.head84:                                   ; preds = %ld.padr.body85, %load.padrows53
  %ld.padr87 = phi i64 [ %317, %load.padrows53 ], [ %361, %ld.padr.body85 ]
  %359 = icmp slt i64 %ld.padr87, 4096
  br i1 %359, label %ld.padr.body85, label %ld.padr.exit86

ld.padr.body85:                                   ; preds = %ld.padr.head84
  %360 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr87
  store float 0.000000e+00, ptr %360, align 4, !alias.scope !13, !noalias !12
  %361 = add nsw i64 %ld.padr87, 1
  br label %ld.padr.head84

ld.padr.exit86:                                   ; preds = %ld.padr.head84
  %362 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %363 = call i64 @llvm.smax.i64(i64 %362, i64 0)
  %364 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %365 = call i64 @llvm.smax.i64(i64 %364, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit86
  %ew = phi i64 [ 0, %ld.padr.exit86 ], [ %373, %ew.body ]
  %366 = icmp slt i64 %ew, 4096
  br i1 %366, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %367 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %368 = load float, ptr %367, align 4, !alias.scope !13, !noalias !12
  %369 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %370 = load float, ptr %369, align 4, !alias.scope !13, !noalias !12
  %371 = fadd float %368, %370
  %372 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %371, ptr %372, align 4, !alias.scope !13, !noalias !12
  %373 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %374 = mul i64 0, %c.stride0
  %375 = add i64 0, %374
  %376 = mul i64 0, %c.stride1
  %377 = add i64 %375, %376
  %378 = sub i64 %c.dim0, 0
  %379 = call i64 @llvm.smin.i64(i64 %363, i64 %378)
  %380 = call i64 @llvm.smin.i64(i64 %379, i64 32)
  %381 = call i64 @llvm.smax.i64(i64 %380, i64 0)
  %382 = call i64 @llvm.smin.i64(i64 %365, i64 128)
  %383 = call i64 @llvm.smin.i64(i64 %382, i64 128)
  %384 = call i64 @llvm.smax.i64(i64 %383, i64 0)
  %nr88 = select i1 true, i64 %381, i64 0
  %nc89 = select i1 true, i64 %384, i64 0
  %win90 = getelementptr float, ptr %c.data, i64 %377
  %unit91 = icmp eq i64 %c.stride1, 1
  br i1 %unit91, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head92

store.done:                                       ; preds = %st.i.exit94, %st.i.exit
  br label %stream.done

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %395, %st.j.exit ]
  %385 = icmp slt i64 %st.i, %nr88
  br i1 %385, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %386 = mul i64 %st.i, %c.stride0
  %387 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %394, %st.j.body ]
  %388 = icmp slt i64 %st.j, %nc89
  br i1 %388, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %389 = add i64 %387, %st.j
  %390 = getelementptr inbounds float, ptr %buf0, i64 %389
  %391 = load float, ptr %390, align 4, !alias.scope !13, !noalias !12
  %392 = add i64 %386, %st.j
  %393 = getelementptr inbounds float, ptr %win90, i64 %392
  store float %391, ptr %393, align 4, !alias.scope !12, !noalias !13
  %394 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %395 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head92:                                      ; preds = %st.j.exit98, %store.strided
  %st.i95 = phi i64 [ 0, %store.strided ], [ %407, %st.j.exit98 ]
  %396 = icmp slt i64 %st.i95, %nr88
  br i1 %396, label %st.i.body93, label %st.i.exit94

st.i.body93:                                      ; preds = %st.i.head92
  %397 = mul i64 %st.i95, %c.stride0
  %398 = mul i64 %st.i95, 128
  br label %st.j.head96

st.i.exit94:                                      ; preds = %st.i.head92
  br label %store.done

st.j.head96:                                      ; preds = %st.j.body97, %st.i.body93
  %st.j99 = phi i64 [ 0, %st.i.body93 ], [ %406, %st.j.body97 ]
  %399 = icmp slt i64 %st.j99, %nc89
  br i1 %399, label %st.j.body97, label %st.j.exit98

st.j.body97:                                      ; preds = %st.j.head96
  %400 = add i64 %398, %st.j99
  %401 = getelementptr inbounds float, ptr %buf0, i64 %400
  %402 = load float, ptr %401, align 4, !alias.scope !13, !noalias !12
  %403 = mul i64 %st.j99, %c.stride1
  %404 = add i64 %397, %403
  %405 = getelementptr inbounds float, ptr %win90, i64 %404
  store float %402, ptr %405, align 4, !alias.scope !12, !noalias !13
  %406 = add nsw i64 %st.j99, 1
  br label %st.j.head96

st.j.exit98:                                      ; preds = %st.j.head96
  %407 = add nsw i64 %st.i95, 1
  br label %st.i.head92

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
