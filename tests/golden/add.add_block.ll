; ModuleID = 'pto_kernel_add_block'
source_filename = "pto_kernel_add_block"
target datalayout = "e-m:e-p270:32:32-p271:32:32-p272:64:64-i64:64-i128:128-f80:128-n8:16:32:64-S128"
target triple = "x86_64-pc-linux-gnu"

%pto_core_ctx = type { i32, i32, ptr, i64, [2 x i64], ptr }
%pto_kernel_tensor = type { ptr, [5 x i64], [5 x i64], i32, i32 }

; Function Attrs: nounwind
define i32 @pto_kernel_add_block(ptr noalias nocapture readonly %tensors, ptr noalias nocapture readonly %scalars, ptr noalias nocapture %ctx) #0 {
entry:
  %divzero = alloca i8, align 1
  store i8 0, ptr %divzero, align 1
  %0 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 3
  %scratch_size = load i64, ptr %0, align 8
  %1 = icmp ult i64 %scratch_size, 32768
  br i1 %1, label %fail, label %ok

fail:                                             ; preds = %entry
  %err_detail = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 32768, ptr %err_detail, align 8
  %2 = getelementptr inbounds i64, ptr %err_detail, i64 1
  store i64 %scratch_size, ptr %2, align 8
  ret i32 3

ok:                                               ; preds = %entry
  %3 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 2
  %scratch = load ptr, ptr %3, align 8, !nonnull !0, !align !1
  %buf0 = getelementptr inbounds i8, ptr %scratch, i64 0
  %buf1 = getelementptr inbounds i8, ptr %scratch, i64 16384
  %4 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 0
  %5 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 0
  %a.data = load ptr, ptr %5, align 8
  %6 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 2, i32 0
  %a.stride0 = load i64, ptr %6, align 8
  %7 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 1, i32 0
  %a.dim0 = load i64, ptr %7, align 8
  %8 = getelementptr inbounds %pto_kernel_tensor, ptr %4, i32 0, i32 2, i32 1
  %a.stride1 = load i64, ptr %8, align 8
  %9 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 1
  %10 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 0
  %b.data = load ptr, ptr %10, align 8
  %11 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 2, i32 0
  %b.stride0 = load i64, ptr %11, align 8
  %12 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 1, i32 0
  %b.dim0 = load i64, ptr %12, align 8
  %13 = icmp ne i64 %a.dim0, %b.dim0
  br i1 %13, label %fail1, label %ok2

fail1:                                            ; preds = %ok
  %err_detail3 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 %a.dim0, ptr %err_detail3, align 8
  %14 = getelementptr inbounds i64, ptr %err_detail3, i64 1
  store i64 %b.dim0, ptr %14, align 8
  ret i32 2

ok2:                                              ; preds = %ok
  %15 = getelementptr inbounds %pto_kernel_tensor, ptr %9, i32 0, i32 2, i32 1
  %b.stride1 = load i64, ptr %15, align 8
  %16 = getelementptr inbounds %pto_kernel_tensor, ptr %tensors, i64 2
  %17 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 0
  %c.data = load ptr, ptr %17, align 8
  %18 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 2, i32 0
  %c.stride0 = load i64, ptr %18, align 8
  %19 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 1, i32 0
  %c.dim0 = load i64, ptr %19, align 8
  %20 = icmp ne i64 %a.dim0, %c.dim0
  br i1 %20, label %fail4, label %ok5

fail4:                                            ; preds = %ok2
  %err_detail6 = getelementptr inbounds %pto_core_ctx, ptr %ctx, i32 0, i32 4
  store i64 %a.dim0, ptr %err_detail6, align 8
  %21 = getelementptr inbounds i64, ptr %err_detail6, i64 1
  store i64 %c.dim0, ptr %21, align 8
  ret i32 2

ok5:                                              ; preds = %ok2
  %22 = getelementptr inbounds %pto_kernel_tensor, ptr %16, i32 0, i32 2, i32 1
  %c.stride1 = load i64, ptr %22, align 8
  %23 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %24 = call i64 @llvm.smax.i64(i64 %23, i64 0)
  %25 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %26 = call i64 @llvm.smax.i64(i64 %25, i64 0)
  %27 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %28 = call i64 @llvm.smax.i64(i64 %27, i64 0)
  %29 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %30 = call i64 @llvm.smax.i64(i64 %29, i64 0)
  %31 = mul i64 0, %a.stride0
  %32 = add i64 0, %31
  %33 = mul i64 0, %a.stride1
  %34 = add i64 %32, %33
  %35 = sub i64 %a.dim0, 0
  %36 = call i64 @llvm.smin.i64(i64 %24, i64 %35)
  %37 = call i64 @llvm.smin.i64(i64 %36, i64 32)
  %38 = call i64 @llvm.smax.i64(i64 %37, i64 0)
  %39 = call i64 @llvm.smin.i64(i64 %26, i64 128)
  %40 = call i64 @llvm.smin.i64(i64 %39, i64 128)
  %41 = call i64 @llvm.smax.i64(i64 %40, i64 0)
  %nr = select i1 true, i64 %38, i64 0
  %nc = select i1 true, i64 %41, i64 0
  %win = getelementptr float, ptr %a.data, i64 %34
  %42 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %43 = call i64 @llvm.smax.i64(i64 %42, i64 0)
  %44 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %45 = call i64 @llvm.smax.i64(i64 %44, i64 0)
  %46 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %47 = call i64 @llvm.smax.i64(i64 %46, i64 0)
  %48 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %49 = call i64 @llvm.smax.i64(i64 %48, i64 0)
  %50 = mul i64 0, %b.stride0
  %51 = add i64 0, %50
  %52 = mul i64 0, %b.stride1
  %53 = add i64 %51, %52
  %54 = sub i64 %b.dim0, 0
  %55 = call i64 @llvm.smin.i64(i64 %43, i64 %54)
  %56 = call i64 @llvm.smin.i64(i64 %55, i64 32)
  %57 = call i64 @llvm.smax.i64(i64 %56, i64 0)
  %58 = call i64 @llvm.smin.i64(i64 %45, i64 128)
  %59 = call i64 @llvm.smin.i64(i64 %58, i64 128)
  %60 = call i64 @llvm.smax.i64(i64 %59, i64 0)
  %nr7 = select i1 true, i64 %57, i64 0
  %nc8 = select i1 true, i64 %60, i64 0
  %win9 = getelementptr float, ptr %b.data, i64 %53
  %61 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %62 = call i64 @llvm.smax.i64(i64 %61, i64 0)
  %63 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %64 = call i64 @llvm.smax.i64(i64 %63, i64 0)
  %65 = mul i64 0, %c.stride0
  %66 = add i64 0, %65
  %67 = mul i64 0, %c.stride1
  %68 = add i64 %66, %67
  %69 = sub i64 %c.dim0, 0
  %70 = call i64 @llvm.smin.i64(i64 %62, i64 %69)
  %71 = call i64 @llvm.smin.i64(i64 %70, i64 32)
  %72 = call i64 @llvm.smax.i64(i64 %71, i64 0)
  %73 = call i64 @llvm.smin.i64(i64 %64, i64 128)
  %74 = call i64 @llvm.smin.i64(i64 %73, i64 128)
  %75 = call i64 @llvm.smax.i64(i64 %74, i64 0)
  %nr10 = select i1 true, i64 %72, i64 0
  %nc11 = select i1 true, i64 %75, i64 0
  %win12 = getelementptr float, ptr %c.data, i64 %68
  %76 = icmp sge i64 %c.stride0, 0
  %77 = icmp eq i64 %c.stride1, 1
  %78 = and i1 %77, %76
  %79 = sub i64 %nr10, 1
  %80 = mul i64 %79, %c.stride0
  %81 = add i64 %80, %nc11
  %82 = icmp eq i64 %nc11, 0
  %83 = icmp eq i64 %nr10, 0
  %84 = or i1 %83, %82
  %85 = select i1 %84, i64 0, i64 %81
  %86 = ptrtoint ptr %win12 to i64
  %87 = mul i64 %85, 4
  %88 = add i64 %86, %87
  %89 = icmp eq i64 %a.stride1, 1
  %90 = and i1 %78, %89
  %91 = icmp sge i64 %a.stride0, 0
  %92 = and i1 %90, %91
  %93 = icmp sge i64 %nr, %nr10
  %94 = and i1 %92, %93
  %95 = icmp sge i64 %nc, %nc11
  %96 = and i1 %94, %95
  %97 = sub i64 %nr10, 1
  %98 = mul i64 %97, %a.stride0
  %99 = add i64 %98, %nc11
  %100 = icmp eq i64 %nc11, 0
  %101 = icmp eq i64 %nr10, 0
  %102 = or i1 %101, %100
  %103 = select i1 %102, i64 0, i64 %99
  %104 = ptrtoint ptr %win to i64
  %105 = mul i64 %103, 4
  %106 = add i64 %104, %105
  %107 = icmp ule i64 %88, %104
  %108 = icmp ule i64 %106, %86
  %109 = or i1 %108, %107
  %110 = and i1 %96, %109
  %111 = icmp eq i64 %b.stride1, 1
  %112 = and i1 %110, %111
  %113 = icmp sge i64 %b.stride0, 0
  %114 = and i1 %112, %113
  %115 = icmp sge i64 %nr7, %nr10
  %116 = and i1 %114, %115
  %117 = icmp sge i64 %nc8, %nc11
  %118 = and i1 %116, %117
  %119 = sub i64 %nr10, 1
  %120 = mul i64 %119, %b.stride0
  %121 = add i64 %120, %nc11
  %122 = icmp eq i64 %nc11, 0
  %123 = icmp eq i64 %nr10, 0
  %124 = or i1 %123, %122
  %125 = select i1 %124, i64 0, i64 %121
  %126 = ptrtoint ptr %win9 to i64
  %127 = mul i64 %125, 4
  %128 = add i64 %126, %127
  %129 = icmp ule i64 %88, %126
  %130 = icmp ule i64 %128, %86
  %131 = or i1 %130, %129
  %132 = and i1 %118, %131
  br i1 %132, label %stream, label %stream.buffered

stream:                                           ; preds = %ok5
  br label %sm.i.head

stream.buffered:                                  ; preds = %ok5
  %133 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %134 = call i64 @llvm.smax.i64(i64 %133, i64 0)
  %135 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %136 = call i64 @llvm.smax.i64(i64 %135, i64 0)
  %137 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %138 = call i64 @llvm.smax.i64(i64 %137, i64 0)
  %139 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %140 = call i64 @llvm.smax.i64(i64 %139, i64 0)
  %141 = mul i64 0, %a.stride0
  %142 = add i64 0, %141
  %143 = mul i64 0, %a.stride1
  %144 = add i64 %142, %143
  %145 = sub i64 %a.dim0, 0
  %146 = call i64 @llvm.smin.i64(i64 %134, i64 %145)
  %147 = call i64 @llvm.smin.i64(i64 %146, i64 32)
  %148 = call i64 @llvm.smax.i64(i64 %147, i64 0)
  %149 = call i64 @llvm.smin.i64(i64 %136, i64 128)
  %150 = call i64 @llvm.smin.i64(i64 %149, i64 128)
  %151 = call i64 @llvm.smax.i64(i64 %150, i64 0)
  %nr13 = select i1 true, i64 %148, i64 0
  %nc14 = select i1 true, i64 %151, i64 0
  %win15 = getelementptr float, ptr %a.data, i64 %144
  %unit = icmp eq i64 %a.stride1, 1
  br i1 %unit, label %load.unit, label %load.strided

stream.done:                                      ; preds = %store.done, %sm.i.exit
  ret i32 0

sm.i.head:                                        ; preds = %sm.j.exit, %stream
  %sm.i = phi i64 [ 0, %stream ], [ %169, %sm.j.exit ]
  %152 = icmp slt i64 %sm.i, %nr10
  br i1 %152, label %sm.i.body, label %sm.i.exit

sm.i.body:                                        ; preds = %sm.i.head
  %153 = mul i64 %sm.i, 128
  br label %sm.j.head

sm.i.exit:                                        ; preds = %sm.i.head
  br label %stream.done

sm.j.head:                                        ; preds = %sm.j.body, %sm.i.body
  %sm.j = phi i64 [ 0, %sm.i.body ], [ %168, %sm.j.body ]
  %154 = icmp slt i64 %sm.j, %nc11
  br i1 %154, label %sm.j.body, label %sm.j.exit

sm.j.body:                                        ; preds = %sm.j.head
  %155 = mul i64 %sm.i, %a.stride0
  %156 = add i64 %155, %sm.j
  %157 = getelementptr inbounds float, ptr %win, i64 %156
  %158 = load float, ptr %157, align 4, !alias.scope !2, !noalias !6
  %159 = mul i64 %sm.i, %b.stride0
  %160 = add i64 %159, %sm.j
  %161 = getelementptr inbounds float, ptr %win9, i64 %160
  %162 = load float, ptr %161, align 4, !alias.scope !2, !noalias !6
  %163 = add i64 %153, %sm.j
  %164 = fadd float %158, %162
  %165 = mul i64 %sm.i, %c.stride0
  %166 = add i64 %165, %sm.j
  %167 = getelementptr inbounds float, ptr %win12, i64 %166
  store float %164, ptr %167, align 4, !alias.scope !9, !noalias !10
  %168 = add nsw i64 %sm.j, 1
  br label %sm.j.head

sm.j.exit:                                        ; preds = %sm.j.head
  %169 = add nsw i64 %sm.i, 1
  br label %sm.i.head

load.unit:                                        ; preds = %stream.buffered
  br label %ld.i.head

load.strided:                                     ; preds = %stream.buffered
  br label %ld.i.head16

load.padrows:                                     ; preds = %ld.i.exit18, %ld.i.exit
  %170 = mul i64 %nr13, 128
  br label %ld.padr.head

ld.i.head:                                        ; preds = %ld.padc.exit, %load.unit
  %ld.i = phi i64 [ 0, %load.unit ], [ %195, %ld.padc.exit ]
  %171 = icmp slt i64 %ld.i, %nr13
  br i1 %171, label %ld.i.body, label %ld.i.exit

ld.i.body:                                        ; preds = %ld.i.head
  %172 = mul i64 %ld.i, %a.stride0
  %173 = mul i64 %ld.i, 128
  %174 = mul i64 %nc14, 4
  %175 = mul i64 8, %a.stride0
  %176 = add i64 %172, %175
  %pf.row = getelementptr float, ptr %win15, i64 %176
  %177 = add i64 %174, 63
  %178 = lshr i64 %177, 6
  br label %pf.line.head

ld.i.exit:                                        ; preds = %ld.i.head
  br label %load.padrows

pf.line.head:                                     ; preds = %pf.line.body, %ld.i.body
  %pf.line = phi i64 [ 0, %ld.i.body ], [ %182, %pf.line.body ]
  %179 = icmp slt i64 %pf.line, %178
  br i1 %179, label %pf.line.body, label %pf.line.exit

pf.line.body:                                     ; preds = %pf.line.head
  %180 = mul i64 %pf.line, 64
  %181 = getelementptr i8, ptr %pf.row, i64 %180
  call void @llvm.prefetch.p0(ptr %181, i32 0, i32 3, i32 1)
  %182 = add nsw i64 %pf.line, 1
  br label %pf.line.head

pf.line.exit:                                     ; preds = %pf.line.head
  br label %ld.j.head

ld.j.head:                                        ; preds = %ld.j.body, %pf.line.exit
  %ld.j = phi i64 [ 0, %pf.line.exit ], [ %189, %ld.j.body ]
  %183 = icmp slt i64 %ld.j, %nc14
  br i1 %183, label %ld.j.body, label %ld.j.exit

ld.j.body:                                        ; preds = %ld.j.head
  %184 = add i64 %172, %ld.j
  %185 = getelementptr inbounds float, ptr %win15, i64 %184
  %186 = load float, ptr %185, align 4, !alias.scope !11, !noalias !12
  %187 = add i64 %173, %ld.j
  %188 = getelementptr inbounds float, ptr %buf0, i64 %187
  store float %186, ptr %188, align 4, !alias.scope !12, !noalias !11
  %189 = add nsw i64 %ld.j, 1
  br label %ld.j.head

ld.j.exit:                                        ; preds = %ld.j.head
  %190 = add i64 %173, 128
  %191 = add i64 %173, %nc14
  br label %ld.padc.head

ld.padc.head:                                     ; preds = %ld.padc.body, %ld.j.exit
  %ld.padc = phi i64 [ %191, %ld.j.exit ], [ %194, %ld.padc.body ]
  %192 = icmp slt i64 %ld.padc, %190
  br i1 %192, label %ld.padc.body, label %ld.padc.exit

ld.padc.body:                                     ; preds = %ld.padc.head
  %193 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc
  store float 0.000000e+00, ptr %193, align 4, !alias.scope !12, !noalias !11
  %194 = add nsw i64 %ld.padc, 1
  br label %ld.padc.head

ld.padc.exit:                                     ; preds = %ld.padc.head
  %195 = add nsw i64 %ld.i, 1
  br label %ld.i.head

ld.i.head16:                                      ; preds = %ld.padc.exit26, %load.strided
  %ld.i19 = phi i64 [ 0, %load.strided ], [ %212, %ld.padc.exit26 ]
  %196 = icmp slt i64 %ld.i19, %nr13
  br i1 %196, label %ld.i.body17, label %ld.i.exit18

ld.i.body17:                                      ; preds = %ld.i.head16
  %197 = mul i64 %ld.i19, %a.stride0
  %198 = mul i64 %ld.i19, 128
  br label %ld.j.head20

ld.i.exit18:                                      ; preds = %ld.i.head16
  br label %load.padrows

ld.j.head20:                                      ; preds = %ld.j.body21, %ld.i.body17
  %ld.j23 = phi i64 [ 0, %ld.i.body17 ], [ %206, %ld.j.body21 ]
  %199 = icmp slt i64 %ld.j23, %nc14
  br i1 %199, label %ld.j.body21, label %ld.j.exit22

ld.j.body21:                                      ; preds = %ld.j.head20
  %200 = mul i64 %ld.j23, %a.stride1
  %201 = add i64 %197, %200
  %202 = getelementptr inbounds float, ptr %win15, i64 %201
  %203 = load float, ptr %202, align 4, !alias.scope !11, !noalias !12
  %204 = add i64 %198, %ld.j23
  %205 = getelementptr inbounds float, ptr %buf0, i64 %204
  store float %203, ptr %205, align 4, !alias.scope !12, !noalias !11
  %206 = add nsw i64 %ld.j23, 1
  br label %ld.j.head20

ld.j.exit22:                                      ; preds = %ld.j.head20
  %207 = add i64 %198, 128
  %208 = add i64 %198, %nc14
  br label %ld.padc.head24

ld.padc.head24:                                   ; preds = %ld.padc.body25, %ld.j.exit22
  %ld.padc27 = phi i64 [ %208, %ld.j.exit22 ], [ %211, %ld.padc.body25 ]
  %209 = icmp slt i64 %ld.padc27, %207
  br i1 %209, label %ld.padc.body25, label %ld.padc.exit26

ld.padc.body25:                                   ; preds = %ld.padc.head24
  %210 = getelementptr inbounds float, ptr %buf0, i64 %ld.padc27
  store float 0.000000e+00, ptr %210, align 4, !alias.scope !12, !noalias !11
  %211 = add nsw i64 %ld.padc27, 1
  br label %ld.padc.head24

ld.padc.exit26:                                   ; preds = %ld.padc.head24
  %212 = add nsw i64 %ld.i19, 1
  br label %ld.i.head16

ld.padr.head:                                     ; preds = %ld.padr.body, %load.padrows
  %ld.padr = phi i64 [ %170, %load.padrows ], [ %215, %ld.padr.body ]
  %213 = icmp slt i64 %ld.padr, 4096
  br i1 %213, label %ld.padr.body, label %ld.padr.exit

ld.padr.body:                                     ; preds = %ld.padr.head
  %214 = getelementptr inbounds float, ptr %buf0, i64 %ld.padr
  store float 0.000000e+00, ptr %214, align 4, !alias.scope !12, !noalias !11
  %215 = add nsw i64 %ld.padr, 1
  br label %ld.padr.head

ld.padr.exit:                                     ; preds = %ld.padr.head
  %216 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %217 = call i64 @llvm.smax.i64(i64 %216, i64 0)
  %218 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %219 = call i64 @llvm.smax.i64(i64 %218, i64 0)
  %220 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %221 = call i64 @llvm.smax.i64(i64 %220, i64 0)
  %222 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %223 = call i64 @llvm.smax.i64(i64 %222, i64 0)
  %224 = mul i64 0, %b.stride0
  %225 = add i64 0, %224
  %226 = mul i64 0, %b.stride1
  %227 = add i64 %225, %226
  %228 = sub i64 %b.dim0, 0
  %229 = call i64 @llvm.smin.i64(i64 %217, i64 %228)
  %230 = call i64 @llvm.smin.i64(i64 %229, i64 32)
  %231 = call i64 @llvm.smax.i64(i64 %230, i64 0)
  %232 = call i64 @llvm.smin.i64(i64 %219, i64 128)
  %233 = call i64 @llvm.smin.i64(i64 %232, i64 128)
  %234 = call i64 @llvm.smax.i64(i64 %233, i64 0)
  %nr28 = select i1 true, i64 %231, i64 0
  %nc29 = select i1 true, i64 %234, i64 0
  %win30 = getelementptr float, ptr %b.data, i64 %227
  %unit31 = icmp eq i64 %b.stride1, 1
  br i1 %unit31, label %load.unit32, label %load.strided33

load.unit32:                                      ; preds = %ld.padr.exit
  br label %ld.i.head35

load.strided33:                                   ; preds = %ld.padr.exit
  br label %ld.i.head52

load.padrows34:                                   ; preds = %ld.i.exit54, %ld.i.exit37
  %235 = mul i64 %nr28, 128
  br label %ld.padr.head64

ld.i.head35:                                      ; preds = %ld.padc.exit50, %load.unit32
  %ld.i38 = phi i64 [ 0, %load.unit32 ], [ %260, %ld.padc.exit50 ]
  %236 = icmp slt i64 %ld.i38, %nr28
  br i1 %236, label %ld.i.body36, label %ld.i.exit37

ld.i.body36:                                      ; preds = %ld.i.head35
  %237 = mul i64 %ld.i38, %b.stride0
  %238 = mul i64 %ld.i38, 128
  %239 = mul i64 %nc29, 4
  %240 = mul i64 8, %b.stride0
  %241 = add i64 %237, %240
  %pf.row39 = getelementptr float, ptr %win30, i64 %241
  %242 = add i64 %239, 63
  %243 = lshr i64 %242, 6
  br label %pf.line.head40

ld.i.exit37:                                      ; preds = %ld.i.head35
  br label %load.padrows34

pf.line.head40:                                   ; preds = %pf.line.body41, %ld.i.body36
  %pf.line43 = phi i64 [ 0, %ld.i.body36 ], [ %247, %pf.line.body41 ]
  %244 = icmp slt i64 %pf.line43, %243
  br i1 %244, label %pf.line.body41, label %pf.line.exit42

pf.line.body41:                                   ; preds = %pf.line.head40
  %245 = mul i64 %pf.line43, 64
  %246 = getelementptr i8, ptr %pf.row39, i64 %245
  call void @llvm.prefetch.p0(ptr %246, i32 0, i32 3, i32 1)
  %247 = add nsw i64 %pf.line43, 1
  br label %pf.line.head40

pf.line.exit42:                                   ; preds = %pf.line.head40
  br label %ld.j.head44

ld.j.head44:                                      ; preds = %ld.j.body45, %pf.line.exit42
  %ld.j47 = phi i64 [ 0, %pf.line.exit42 ], [ %254, %ld.j.body45 ]
  %248 = icmp slt i64 %ld.j47, %nc29
  br i1 %248, label %ld.j.body45, label %ld.j.exit46

ld.j.body45:                                      ; preds = %ld.j.head44
  %249 = add i64 %237, %ld.j47
  %250 = getelementptr inbounds float, ptr %win30, i64 %249
  %251 = load float, ptr %250, align 4, !alias.scope !11, !noalias !12
  %252 = add i64 %238, %ld.j47
  %253 = getelementptr inbounds float, ptr %buf1, i64 %252
  store float %251, ptr %253, align 4, !alias.scope !12, !noalias !11
  %254 = add nsw i64 %ld.j47, 1
  br label %ld.j.head44

ld.j.exit46:                                      ; preds = %ld.j.head44
  %255 = add i64 %238, 128
  %256 = add i64 %238, %nc29
  br label %ld.padc.head48

ld.padc.head48:                                   ; preds = %ld.padc.body49, %ld.j.exit46
  %ld.padc51 = phi i64 [ %256, %ld.j.exit46 ], [ %259, %ld.padc.body49 ]
  %257 = icmp slt i64 %ld.padc51, %255
  br i1 %257, label %ld.padc.body49, label %ld.padc.exit50

ld.padc.body49:                                   ; preds = %ld.padc.head48
  %258 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc51
  store float 0.000000e+00, ptr %258, align 4, !alias.scope !12, !noalias !11
  %259 = add nsw i64 %ld.padc51, 1
  br label %ld.padc.head48

ld.padc.exit50:                                   ; preds = %ld.padc.head48
  %260 = add nsw i64 %ld.i38, 1
  br label %ld.i.head35

ld.i.head52:                                      ; preds = %ld.padc.exit62, %load.strided33
  %ld.i55 = phi i64 [ 0, %load.strided33 ], [ %277, %ld.padc.exit62 ]
  %261 = icmp slt i64 %ld.i55, %nr28
  br i1 %261, label %ld.i.body53, label %ld.i.exit54

ld.i.body53:                                      ; preds = %ld.i.head52
  %262 = mul i64 %ld.i55, %b.stride0
  %263 = mul i64 %ld.i55, 128
  br label %ld.j.head56

ld.i.exit54:                                      ; preds = %ld.i.head52
  br label %load.padrows34

ld.j.head56:                                      ; preds = %ld.j.body57, %ld.i.body53
  %ld.j59 = phi i64 [ 0, %ld.i.body53 ], [ %271, %ld.j.body57 ]
  %264 = icmp slt i64 %ld.j59, %nc29
  br i1 %264, label %ld.j.body57, label %ld.j.exit58

ld.j.body57:                                      ; preds = %ld.j.head56
  %265 = mul i64 %ld.j59, %b.stride1
  %266 = add i64 %262, %265
  %267 = getelementptr inbounds float, ptr %win30, i64 %266
  %268 = load float, ptr %267, align 4, !alias.scope !11, !noalias !12
  %269 = add i64 %263, %ld.j59
  %270 = getelementptr inbounds float, ptr %buf1, i64 %269
  store float %268, ptr %270, align 4, !alias.scope !12, !noalias !11
  %271 = add nsw i64 %ld.j59, 1
  br label %ld.j.head56

ld.j.exit58:                                      ; preds = %ld.j.head56
  %272 = add i64 %263, 128
  %273 = add i64 %263, %nc29
  br label %ld.padc.head60

ld.padc.head60:                                   ; preds = %ld.padc.body61, %ld.j.exit58
  %ld.padc63 = phi i64 [ %273, %ld.j.exit58 ], [ %276, %ld.padc.body61 ]
  %274 = icmp slt i64 %ld.padc63, %272
  br i1 %274, label %ld.padc.body61, label %ld.padc.exit62

ld.padc.body61:                                   ; preds = %ld.padc.head60
  %275 = getelementptr inbounds float, ptr %buf1, i64 %ld.padc63
  store float 0.000000e+00, ptr %275, align 4, !alias.scope !12, !noalias !11
  %276 = add nsw i64 %ld.padc63, 1
  br label %ld.padc.head60

ld.padc.exit62:                                   ; preds = %ld.padc.head60
  %277 = add nsw i64 %ld.i55, 1
  br label %ld.i.head52

ld.padr.head64:                                   ; preds = %ld.padr.body65, %load.padrows34
  %ld.padr67 = phi i64 [ %235, %load.padrows34 ], [ %280, %ld.padr.body65 ]
  %278 = icmp slt i64 %ld.padr67, 4096
  br i1 %278, label %ld.padr.body65, label %ld.padr.exit66

ld.padr.body65:                                   ; preds = %ld.padr.head64
  %279 = getelementptr inbounds float, ptr %buf1, i64 %ld.padr67
  store float 0.000000e+00, ptr %279, align 4, !alias.scope !12, !noalias !11
  %280 = add nsw i64 %ld.padr67, 1
  br label %ld.padr.head64

ld.padr.exit66:                                   ; preds = %ld.padr.head64
  %281 = call i64 @llvm.smin.i64(i64 %a.dim0, i64 32)
  %282 = call i64 @llvm.smax.i64(i64 %281, i64 0)
  %283 = call i64 @llvm.smin.i64(i64 128, i64 128)
  %284 = call i64 @llvm.smax.i64(i64 %283, i64 0)
  br label %ew.head

ew.head:                                          ; preds = %ew.body, %ld.padr.exit66
  %ew = phi i64 [ 0, %ld.padr.exit66 ], [ %292, %ew.body ]
  %285 = icmp slt i64 %ew, 4096
  br i1 %285, label %ew.body, label %ew.exit

ew.body:                                          ; preds = %ew.head
  %286 = getelementptr inbounds float, ptr %buf0, i64 %ew
  %287 = load float, ptr %286, align 4, !alias.scope !12, !noalias !11
  %288 = getelementptr inbounds float, ptr %buf1, i64 %ew
  %289 = load float, ptr %288, align 4, !alias.scope !12, !noalias !11
  %290 = fadd float %287, %289
  %291 = getelementptr inbounds float, ptr %buf0, i64 %ew
  store float %290, ptr %291, align 4, !alias.scope !12, !noalias !11
  %292 = add nsw i64 %ew, 1
  br label %ew.head

ew.exit:                                          ; preds = %ew.head
  %293 = mul i64 0, %c.stride0
  %294 = add i64 0, %293
  %295 = mul i64 0, %c.stride1
  %296 = add i64 %294, %295
  %297 = sub i64 %c.dim0, 0
  %298 = call i64 @llvm.smin.i64(i64 %282, i64 %297)
  %299 = call i64 @llvm.smin.i64(i64 %298, i64 32)
  %300 = call i64 @llvm.smax.i64(i64 %299, i64 0)
  %301 = call i64 @llvm.smin.i64(i64 %284, i64 128)
  %302 = call i64 @llvm.smin.i64(i64 %301, i64 128)
  %303 = call i64 @llvm.smax.i64(i64 %302, i64 0)
  %nr68 = select i1 true, i64 %300, i64 0
  %nc69 = select i1 true, i64 %303, i64 0
  %win70 = getelementptr float, ptr %c.data, i64 %296
  %unit71 = icmp eq i64 %c.stride1, 1
  br i1 %unit71, label %store.unit, label %store.strided

store.unit:                                       ; preds = %ew.exit
  br label %st.i.head

store.strided:                                    ; preds = %ew.exit
  br label %st.i.head72

store.done:                                       ; preds = %st.i.exit74, %st.i.exit
  br label %stream.done

st.i.head:                                        ; preds = %st.j.exit, %store.unit
  %st.i = phi i64 [ 0, %store.unit ], [ %314, %st.j.exit ]
  %304 = icmp slt i64 %st.i, %nr68
  br i1 %304, label %st.i.body, label %st.i.exit

st.i.body:                                        ; preds = %st.i.head
  %305 = mul i64 %st.i, %c.stride0
  %306 = mul i64 %st.i, 128
  br label %st.j.head

st.i.exit:                                        ; preds = %st.i.head
  br label %store.done

st.j.head:                                        ; preds = %st.j.body, %st.i.body
  %st.j = phi i64 [ 0, %st.i.body ], [ %313, %st.j.body ]
  %307 = icmp slt i64 %st.j, %nc69
  br i1 %307, label %st.j.body, label %st.j.exit

st.j.body:                                        ; preds = %st.j.head
  %308 = add i64 %306, %st.j
  %309 = getelementptr inbounds float, ptr %buf0, i64 %308
  %310 = load float, ptr %309, align 4, !alias.scope !12, !noalias !11
  %311 = add i64 %305, %st.j
  %312 = getelementptr inbounds float, ptr %win70, i64 %311
  store float %310, ptr %312, align 4, !alias.scope !11, !noalias !12
  %313 = add nsw i64 %st.j, 1
  br label %st.j.head

st.j.exit:                                        ; preds = %st.j.head
  %314 = add nsw i64 %st.i, 1
  br label %st.i.head

st.i.head72:                                      ; preds = %st.j.exit78, %store.strided
  %st.i75 = phi i64 [ 0, %store.strided ], [ %326, %st.j.exit78 ]
  %315 = icmp slt i64 %st.i75, %nr68
  br i1 %315, label %st.i.body73, label %st.i.exit74

st.i.body73:                                      ; preds = %st.i.head72
  %316 = mul i64 %st.i75, %c.stride0
  %317 = mul i64 %st.i75, 128
  br label %st.j.head76

st.i.exit74:                                      ; preds = %st.i.head72
  br label %store.done

st.j.head76:                                      ; preds = %st.j.body77, %st.i.body73
  %st.j79 = phi i64 [ 0, %st.i.body73 ], [ %325, %st.j.body77 ]
  %318 = icmp slt i64 %st.j79, %nc69
  br i1 %318, label %st.j.body77, label %st.j.exit78

st.j.body77:                                      ; preds = %st.j.head76
  %319 = add i64 %317, %st.j79
  %320 = getelementptr inbounds float, ptr %buf0, i64 %319
  %321 = load float, ptr %320, align 4, !alias.scope !12, !noalias !11
  %322 = mul i64 %st.j79, %c.stride1
  %323 = add i64 %316, %322
  %324 = getelementptr inbounds float, ptr %win70, i64 %323
  store float %321, ptr %324, align 4, !alias.scope !11, !noalias !12
  %325 = add nsw i64 %st.j79, 1
  br label %st.j.head76

st.j.exit78:                                      ; preds = %st.j.head76
  %326 = add nsw i64 %st.i75, 1
  br label %st.i.head72

after.return:                                     ; No predecessors!
  ret i32 0
}

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smin.i64(i64, i64) #1

; Function Attrs: nocallback nofree nosync nounwind speculatable willreturn memory(none)
declare i64 @llvm.smax.i64(i64, i64) #1

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
!11 = !{!3}
!12 = !{!7}
