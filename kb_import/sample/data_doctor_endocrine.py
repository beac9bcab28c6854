"""Sample KB, role ``doctor_endocrine``: concise professional notes for endocrinologists and GPs.

Written for this project as orientation summaries; current national (Bộ Y tế) and international guidelines
and the clinic's protocols prevail, and every threshold must be applied to the individual patient.
"""

from __future__ import annotations

ENTRIES: list[tuple[str, str, str, str]] = [
    # --- Chẩn đoán
    ("Chẩn đoán", "Tiêu chuẩn chẩn đoán đái tháo đường?",
     "Một trong các tiêu chuẩn: glucose huyết tương lúc đói ≥ 7,0 mmol/L (126 mg/dL); glucose 2 giờ sau nghiệm pháp dung nạp 75 g ≥ 11,1 mmol/L (200 mg/dL); "
     "HbA1c ≥ 6,5% (48 mmol/mol) với xét nghiệm chuẩn hóa; hoặc glucose bất kỳ ≥ 11,1 mmol/L kèm triệu chứng tăng đường huyết kinh điển. "
     "Nếu không có tăng đường huyết rõ, cần hai kết quả bất thường (cùng mẫu hoặc hai lần xét nghiệm).",
     "tiêu chuẩn chẩn đoán đái tháo đường; chẩn đoán tiểu đường; OGTT; HbA1c 6,5"),
    ("Chẩn đoán", "Tiêu chuẩn tiền đái tháo đường?",
     "Rối loạn glucose lúc đói 5,6–6,9 mmol/L (100–125 mg/dL), rối loạn dung nạp glucose (glucose 2 giờ 7,8–11,0 mmol/L) hoặc HbA1c 5,7–6,4%. "
     "Can thiệp lối sống tích cực (giảm 5–7% cân nặng, ≥ 150 phút vận động/tuần) là nền tảng; metformin có thể cân nhắc ở nhóm nguy cơ rất cao (BMI cao, tuổi trẻ, tiền sử đái tháo đường thai kỳ). "
     "Theo dõi đường huyết ít nhất hằng năm.",
     "tiền đái tháo đường; rối loạn đường huyết lúc đói; IFG; IGT; dự phòng đái tháo đường"),
    ("Chẩn đoán", "Đối tượng cần tầm soát đái tháo đường típ 2?",
     "Tầm soát người lớn thừa cân, béo phì có thêm yếu tố nguy cơ (với người châu Á, ngưỡng BMI ≥ 23 kg/m²), "
     "và mọi người từ 35 tuổi trở lên (theo ADA; hướng dẫn quốc gia có thể khác). "
     "Yếu tố nguy cơ: người thân bậc một mắc bệnh, tiền sử đái tháo đường thai kỳ, tăng huyết áp, rối loạn lipid máu, bệnh tim mạch, buồng trứng đa nang, ít vận động. "
     "Kết quả bình thường: lặp lại tối thiểu mỗi 3 năm.",
     "tầm soát đái tháo đường; sàng lọc tiểu đường; BMI người châu Á; đối tượng nguy cơ"),
    ("Chẩn đoán", "Khi nào nghĩ đến đái tháo đường típ 1 hoặc LADA ở người lớn?",
     "Gợi ý: khởi phát nhanh với sụt cân, ceton niệu hoặc nhiễm toan ceton, BMI bình thường hoặc thấp, tiền sử bệnh tự miễn, thất bại sớm với thuốc uống. "
     "Xét nghiệm tự kháng thể (GAD65, IA-2, ZnT8) và C-peptide giúp phân loại. "
     "Nghi típ 1 cần bắt đầu insulin, không trì hoãn để chờ kết quả kháng thể.",
     "típ 1 người lớn; LADA; kháng thể GAD; C-peptide; phân loại đái tháo đường"),
    ("Chẩn đoán", "Tầm soát và chẩn đoán đái tháo đường thai kỳ?",
     "Tầm soát ở tuần 24–28 cho thai phụ chưa được chẩn đoán đái tháo đường trước đó. "
     "Theo chiến lược một bước (OGTT 75 g), chẩn đoán khi có ít nhất một giá trị: lúc đói ≥ 5,1 mmol/L (92 mg/dL), sau 1 giờ ≥ 10,0 mmol/L (180 mg/dL), sau 2 giờ ≥ 8,5 mmol/L (153 mg/dL). "
     "Thai phụ có nguy cơ cao nên được tầm soát đái tháo đường chưa chẩn đoán ngay lần khám thai đầu. "
     "Sau sinh làm OGTT lúc 4–12 tuần và tầm soát định kỳ suốt đời.",
     "đái tháo đường thai kỳ; tiểu đường thai kỳ; OGTT 75g; IADPSG; tầm soát thai kỳ"),
    # --- Mục tiêu điều trị
    ("Mục tiêu điều trị", "Mục tiêu HbA1c cho bệnh nhân đái tháo đường?",
     "Mục tiêu chung cho đa số người lớn không mang thai là HbA1c < 7%. "
     "Mục tiêu chặt hơn (ví dụ < 6,5%) có thể phù hợp cho người trẻ, bệnh ngắn, không có bệnh tim mạch, nếu đạt được mà không hạ đường huyết; "
     "mục tiêu nới lỏng (< 8% hoặc cao hơn) cho người cao tuổi, nhiều bệnh kèm theo, tiền sử hạ đường huyết nặng hoặc kỳ vọng sống hạn chế. "
     "Cá thể hóa và đánh giá lại định kỳ.",
     "mục tiêu HbA1c; cá thể hóa mục tiêu; người cao tuổi đái tháo đường"),
    ("Mục tiêu điều trị", "Mục tiêu glucose mao mạch và chỉ số CGM?",
     "Glucose trước ăn 4,4–7,2 mmol/L (80–130 mg/dL); đỉnh sau ăn < 10,0 mmol/L (180 mg/dL) cho đa số người lớn. "
     "Với CGM: thời gian trong khoảng 3,9–10,0 mmol/L (TIR) > 70%, dưới 3,9 mmol/L < 4% và dưới 3,0 mmol/L < 1%; người cao tuổi, nguy cơ cao dùng mục tiêu nới lỏng (TIR > 50%, dưới 3,9 < 1%).",
     "mục tiêu đường huyết; CGM; time in range; TIR; đường huyết mao mạch"),
    ("Mục tiêu điều trị", "Mục tiêu huyết áp và lipid máu ở người đái tháo đường?",
     "Huyết áp mục tiêu thường < 130/80 mmHg nếu đạt được an toàn. "
     "Statin cho người 40–75 tuổi ít nhất cường độ trung bình; có bệnh tim mạch do xơ vữa dùng statin cường độ cao với mục tiêu LDL-C < 1,4 mmol/L (55 mg/dL), "
     "nguy cơ cao chưa có bệnh tim mạch mục tiêu LDL-C < 1,8 mmol/L (70 mg/dL). Có thể phối hợp ezetimibe hoặc thuốc ức chế PCSK9 khi chưa đạt.",
     "huyết áp mục tiêu; statin; LDL mục tiêu; mỡ máu đái tháo đường"),
    # --- Thuốc uống & tiêm không insulin
    ("Thuốc hạ glucose", "Lựa chọn thuốc khởi đầu cho đái tháo đường típ 2?",
     "Thay đổi lối sống cho mọi bệnh nhân. Lựa chọn thuốc dựa trên bệnh đồng mắc: có bệnh tim mạch do xơ vữa hoặc nguy cơ cao, suy tim, bệnh thận mạn thì ưu tiên SGLT2i và/hoặc GLP-1 RA có lợi ích đã chứng minh, độc lập với HbA1c và metformin. "
     "Không có các bệnh này, metformin vẫn là lựa chọn đầu tay hợp lý, chi phí thấp. "
     "HbA1c cao hơn mục tiêu ≥ 1,5% có thể phối hợp sớm hai thuốc; có triệu chứng tăng glucose nặng hoặc dị hóa thì bắt đầu insulin.",
     "khởi đầu điều trị; thuốc đầu tay; SGLT2i; GLP-1 RA; metformin; phối hợp sớm"),
    ("Thuốc hạ glucose", "Metformin: chỉnh liều theo chức năng thận?",
     "eGFR ≥ 45 mL/phút/1,73 m²: dùng liều thường. eGFR 30–44: không nên khởi đầu mới; đang dùng thì giảm liều (thường tối đa 1.000 mg/ngày) và theo dõi. "
     "eGFR < 30: chống chỉ định. "
     "Tạm ngưng khi chụp có thuốc cản quang iod ở bệnh nhân eGFR 30–60, bệnh gan, nghiện rượu, suy tim, hoặc tiêm cản quang đường động mạch; đánh giá lại eGFR sau 48 giờ. "
     "Kiểm tra vitamin B12 định kỳ khi dùng lâu dài.",
     "metformin eGFR; metformin suy thận; thuốc cản quang metformin; thiếu B12"),
    ("Thuốc hạ glucose", "Thuốc ức chế SGLT2: lợi ích và lưu ý an toàn?",
     "Giảm nhập viện vì suy tim và làm chậm tiến triển bệnh thận mạn, có lợi ích tim mạch; hiệu quả hạ glucose giảm khi eGFR thấp nhưng lợi ích thận tim vẫn còn (khởi đầu được khi eGFR ≥ 20 cho chỉ định thận). "
     "Lưu ý: nhiễm nấm sinh dục, giảm thể tích, nhiễm toan ceton với glucose bình thường hoặc chỉ tăng nhẹ. "
     "Ngưng ít nhất 3 ngày trước phẫu thuật theo chương trình (ertugliflozin 4 ngày), khi ốm cấp, nhịn ăn hoặc mất nước.",
     "SGLT2; empagliflozin; dapagliflozin; nhiễm toan ceton euglycemic; ngưng trước phẫu thuật"),
    ("Thuốc hạ glucose", "Thuốc đồng vận thụ thể GLP-1: chỉ định và chống chỉ định?",
     "Ưu tiên ở bệnh nhân có bệnh tim mạch do xơ vữa hoặc nguy cơ cao (với thuốc có lợi ích đã chứng minh) và khi cần giảm cân đáng kể. "
     "Tác dụng phụ thường gặp: buồn nôn, nôn, tiêu chảy — tăng liều từ từ. "
     "Chống chỉ định khi tiền sử bản thân hoặc gia đình ung thư tuyến giáp thể tủy hoặc MEN2; thận trọng với tiền sử viêm tụy. "
     "Khi phối hợp insulin hoặc sulfonylurea cần giảm liều các thuốc này để tránh hạ glucose.",
     "GLP-1 RA; semaglutide; liraglutide; dulaglutide; giảm cân; ung thư giáp thể tủy"),
    ("Thuốc hạ glucose", "Sulfonylurea ở người cao tuổi: lưu ý gì?",
     "Sulfonylurea hiệu quả, rẻ nhưng gây hạ glucose và tăng cân; nguy cơ cao ở người cao tuổi, suy thận, ăn uống thất thường. "
     "Tránh glibenclamide ở người cao tuổi; nếu dùng, ưu tiên gliclazide hoặc glimepiride liều thấp, hướng dẫn nhận biết và xử trí hạ glucose. "
     "Cân nhắc thay bằng nhóm ít nguy cơ hạ glucose khi có điều kiện.",
     "sulfonylurea; gliclazide; glimepiride; glibenclamide; hạ đường huyết người cao tuổi"),
    ("Thuốc hạ glucose", "Thuốc ức chế DPP-4: vị trí trong điều trị?",
     "DPP-4i dung nạp tốt, ít hạ glucose khi dùng một mình, trung tính về cân nặng; hiệu quả hạ HbA1c khiêm tốn. "
     "Phù hợp người cao tuổi hoặc cần phác đồ đơn giản. Cần chỉnh liều theo eGFR (trừ linagliptin). "
     "Không phối hợp với GLP-1 RA; saxagliptin liên quan tăng nhập viện vì suy tim, thận trọng ở bệnh nhân suy tim.",
     "DPP-4; sitagliptin; linagliptin; vildagliptin; saxagliptin suy tim"),
    # --- Insulin
    ("Insulin", "Khởi đầu và chỉnh liều insulin nền ở đái tháo đường típ 2?",
     "Khởi đầu 10 đơn vị/ngày hoặc 0,1–0,2 đơn vị/kg/ngày, tiêm cùng giờ mỗi ngày, tiếp tục metformin và thuốc có lợi ích tim thận nếu phù hợp. "
     "Chỉnh liều: tăng 2 đơn vị mỗi 3 ngày (hoặc 10–15%/tuần) đến khi glucose đói đạt mục tiêu; nếu hạ glucose không rõ nguyên nhân, giảm 10–20%. "
     "Khi liều nền > 0,5 đơn vị/kg/ngày mà HbA1c vẫn cao (overbasalization), cân nhắc thêm GLP-1 RA hoặc insulin bữa ăn thay vì tiếp tục tăng nền.",
     "insulin nền; khởi đầu insulin; chỉnh liều insulin; glargine; overbasalization"),
    ("Insulin", "Chỉ định insulin ngay từ khi chẩn đoán đái tháo đường típ 2?",
     "Cân nhắc insulin ngay khi có triệu chứng dị hóa (sụt cân, ceton niệu), glucose ≥ 16,7 mmol/L (300 mg/dL) hoặc HbA1c > 10% kèm triệu chứng, hoặc nghi típ 1. "
     "Sau khi kiểm soát nhiễm độc glucose, có thể giảm hoặc chuyển sang thuốc khác tùy đáp ứng.",
     "insulin sớm; glucose rất cao; nhiễm độc glucose; HbA1c trên 10"),
    ("Insulin", "Phác đồ basal-bolus và điều chỉnh liều bữa ăn?",
     "Tổng liều ban đầu thường 0,4–0,5 đơn vị/kg/ngày ở típ 1 (khoảng 50% nền, 50% chia các bữa). "
     "Với típ 2 đang dùng nền, thêm insulin nhanh trước bữa lớn nhất 4 đơn vị hoặc 10% liều nền, rồi chỉnh 1–2 đơn vị hoặc 10–15% mỗi 2 lần/tuần dựa trên glucose sau bữa đó. "
     "Hướng dẫn bệnh nhân đếm carbohydrate và liều hiệu chỉnh khi có điều kiện.",
     "basal bolus; insulin bữa ăn; insulin nhanh; đếm carbohydrate"),
    ("Insulin", "Xử trí hiện tượng tăng glucose buổi sáng: Somogyi hay hiện tượng bình minh?",
     "Đo glucose khoảng 2–3 giờ sáng vài đêm hoặc dùng CGM. Glucose đêm thấp rồi tăng sáng gợi ý hạ glucose ban đêm (Somogyi, hiếm gặp): giảm insulin buổi tối hoặc điều chỉnh bữa phụ. "
     "Glucose đêm bình thường hoặc cao và tăng dần đến sáng là hiện tượng bình minh: cân nhắc chỉnh giờ hoặc loại insulin nền. "
     "Kiểm tra thêm kỹ thuật tiêm và loạn dưỡng mỡ tại vị trí tiêm.",
     "hiện tượng bình minh; Somogyi; glucose buổi sáng cao; dawn phenomenon"),
    # --- Hạ đường huyết
    ("Hạ glucose máu", "Phân độ và xử trí hạ glucose máu?",
     "Mức 1: < 3,9 mmol/L (70 mg/dL); mức 2: < 3,0 mmol/L (54 mg/dL); mức 3: nặng, có rối loạn ý thức hoặc thể chất cần người khác hỗ trợ. "
     "Tỉnh: 15–20 g glucose uống, kiểm tra lại sau 15 phút, lặp lại nếu còn thấp, sau đó ăn bữa nhẹ. "
     "Không tỉnh: glucagon (tiêm hoặc xịt mũi) hoặc glucose tĩnh mạch; sau đó tìm nguyên nhân, chỉnh phác đồ và đánh giá hạ glucose không nhận biết.",
     "hạ đường huyết; phân độ hạ glucose; glucagon; xử trí hạ đường huyết; hypoglycemia"),
    ("Hạ glucose máu", "Hạ glucose không nhận biết: cách tiếp cận?",
     "Thường gặp ở típ 1 lâu năm hoặc sau các đợt hạ glucose lặp lại. "
     "Nâng mục tiêu glucose tạm thời vài tuần, tránh tuyệt đối hạ glucose để phục hồi nhận biết; xem lại liều insulin, sulfonylurea, rượu, vận động. "
     "CGM có báo động là công cụ quan trọng; kê glucagon cho bệnh nhân có nguy cơ hạ glucose mức 3 và hướng dẫn người nhà.",
     "hạ đường huyết không nhận biết; hypoglycemia unawareness; CGM báo động"),
    # --- Cấp cứu tăng glucose
    ("Cấp cứu tăng glucose", "Tiêu chuẩn chẩn đoán nhiễm toan ceton do đái tháo đường (DKA)?",
     "Theo đồng thuận 2024: glucose ≥ 11,1 mmol/L (200 mg/dL) hoặc tiền sử đái tháo đường; ceton máu (β-hydroxybutyrate) ≥ 3,0 mmol/L hoặc ceton niệu ≥ 2+; "
     "toan chuyển hóa pH < 7,3 và/hoặc bicarbonate < 18 mmol/L. "
     "Lưu ý DKA với glucose bình thường ở bệnh nhân dùng SGLT2i, thai kỳ, nhịn ăn.",
     "nhiễm toan ceton; DKA; ceton máu; toan chuyển hóa; tiêu chuẩn DKA"),
    ("Cấp cứu tăng glucose", "Nguyên tắc điều trị DKA?",
     "Bù dịch (thường natri clorid 0,9% 1–1,5 L giờ đầu ở người lớn không có chống chỉ định, sau đó điều chỉnh theo huyết động và natri); "
     "kali: nếu K < 3,5 mmol/L bù kali trước và hoãn insulin; insulin truyền tĩnh mạch khoảng 0,1 đơn vị/kg/giờ; thêm glucose khi glucose giảm còn khoảng 13,9 mmol/L (250 mg/dL) để tiếp tục insulin đến khi hết toan ceton. "
     "Tìm và điều trị yếu tố khởi phát; chuyển insulin dưới da, tiêm nền chồng lấn 1–2 giờ trước khi ngưng truyền.",
     "điều trị DKA; bù dịch; insulin truyền tĩnh mạch; bù kali; nhiễm toan ceton"),
    ("Cấp cứu tăng glucose", "Tăng áp lực thẩm thấu do tăng glucose (HHS): nhận diện?",
     "Thường ở người cao tuổi típ 2: glucose rất cao (thường ≥ 33,3 mmol/L, 600 mg/dL), áp lực thẩm thấu hiệu dụng > 300–320 mOsm/kg, mất nước nặng, rối loạn ý thức, không có toan ceton đáng kể. "
     "Bù dịch là ưu tiên hàng đầu, giảm áp lực thẩm thấu từ từ; insulin liều thấp sau khi bù dịch ban đầu; theo dõi nguy cơ huyết khối và tìm yếu tố khởi phát (nhiễm trùng, thuốc).",
     "HHS; tăng áp lực thẩm thấu; hôn mê tăng thẩm thấu; người cao tuổi tăng đường huyết"),
    # --- Biến chứng
    ("Biến chứng mạn", "Tầm soát bệnh thận do đái tháo đường?",
     "Xét nghiệm tỷ số albumin/creatinin niệu (UACR) và eGFR ít nhất mỗi năm: típ 2 từ lúc chẩn đoán, típ 1 sau 5 năm. "
     "Chẩn đoán albumin niệu cần 2/3 mẫu bất thường trong 3–6 tháng. "
     "Điều trị: kiểm soát huyết áp, ACEi hoặc ARB khi có albumin niệu hoặc tăng huyết áp, SGLT2i nếu eGFR ≥ 20, cân nhắc finerenone khi vẫn còn albumin niệu; theo dõi kali, creatinin.",
     "bệnh thận đái tháo đường; UACR; albumin niệu; eGFR; finerenone; ACEi ARB"),
    ("Biến chứng mạn", "Tầm soát bệnh võng mạc đái tháo đường?",
     "Típ 2: khám đáy mắt giãn đồng tử hoặc chụp võng mạc ngay khi chẩn đoán; típ 1: trong vòng 5 năm sau chẩn đoán. "
     "Sau đó mỗi năm; có thể 1–2 năm một lần nếu nhiều lần bình thường và kiểm soát glucose tốt. "
     "Thai phụ đái tháo đường có sẵn cần khám trước hoặc trong 3 tháng đầu và theo dõi suốt thai kỳ. "
     "Giảm HbA1c quá nhanh có thể làm bệnh võng mạc nặng lên tạm thời (cần theo dõi khi bắt đầu GLP-1 RA mạnh hoặc insulin ở người có bệnh võng mạc).",
     "võng mạc đái tháo đường; khám đáy mắt; tầm soát mắt; bệnh võng mạc"),
    ("Biến chứng mạn", "Khám bàn chân đái tháo đường định kỳ gồm những gì?",
     "Ít nhất mỗi năm: hỏi tiền sử loét, cắt cụt, triệu chứng thần kinh và mạch máu; khám da, biến dạng, chai; "
     "đánh giá thần kinh bằng monofilament 10 g kèm một test khác (âm thoa 128 Hz, cảm giác châm, phản xạ gân gót); bắt mạch mu chân, chày sau, đo ABI khi nghi bệnh động mạch. "
     "Nguy cơ cao (mất cảm giác, biến dạng, bệnh động mạch ngoại biên, tiền sử loét) cần khám mỗi lần tái khám và chuyển chuyên khoa chăm sóc bàn chân.",
     "khám bàn chân; monofilament; bàn chân đái tháo đường; ABI; phân tầng nguy cơ loét"),
    ("Biến chứng mạn", "Xử trí loét bàn chân đái tháo đường có nhiễm trùng?",
     "Đánh giá độ sâu, lộ xương (probe-to-bone), mức độ nhiễm trùng (theo IWGDF/IDSA), tưới máu chi và X-quang tìm viêm xương. "
     "Nhiễm trùng trung bình – nặng, thiếu máu chi nghiêm trọng hoặc hoại tử cần nhập viện, kháng sinh theo kinh nghiệm rồi theo kết quả cấy mô sâu, cắt lọc và đánh giá tái thông mạch. "
     "Giảm tải tì đè là bắt buộc; kiểm soát glucose và phối hợp đa chuyên khoa.",
     "loét bàn chân nhiễm trùng; viêm xương; IWGDF; cắt lọc; giảm tải tì đè"),
    ("Biến chứng mạn", "Điều trị đau do bệnh thần kinh ngoại biên đái tháo đường?",
     "Lựa chọn đầu tay: pregabalin hoặc gabapentin, duloxetine, hoặc chống trầm cảm ba vòng (thận trọng ở người cao tuổi, bệnh tim). "
     "Điều chỉnh liều theo chức năng thận, đánh giá đáp ứng sau vài tuần; phối hợp thuốc khi đáp ứng một phần. "
     "Tránh opioid kéo dài. Song song tối ưu kiểm soát glucose và chăm sóc bàn chân.",
     "đau thần kinh ngoại biên; pregabalin; duloxetine; gabapentin; bệnh thần kinh đái tháo đường"),
    # --- Quản lý chung
    ("Quản lý chung", "Quản lý đái tháo đường quanh phẫu thuật?",
     "Đánh giá HbA1c trước phẫu thuật chương trình; mục tiêu glucose quanh mổ thường 5,6–10,0 mmol/L (100–180 mg/dL). "
     "Ngưng SGLT2i 3–4 ngày trước mổ, ngưng thuốc uống khác vào ngày mổ; insulin nền thường giảm còn khoảng 75–80% liều (glargine, detemir) hoặc 50% insulin NPH buổi sáng. "
     "Dùng insulin điều chỉnh hoặc truyền insulin khi cần; tránh phác đồ chỉ dùng insulin theo thang (sliding scale) đơn thuần.",
     "quanh phẫu thuật; trước mổ; ngưng thuốc trước mổ; insulin nền trước mổ; sliding scale"),
    ("Quản lý chung", "Quản lý đái tháo đường ở người cao tuổi?",
     "Đánh giá chức năng nhận thức, khả năng tự chăm sóc, nguy cơ té ngã và bệnh đồng mắc để đặt mục tiêu. "
     "Người khỏe mạnh: HbA1c < 7,0–7,5%; sức khỏe trung bình hoặc phức tạp: < 8,0%; sức khỏe rất kém: tránh tăng glucose có triệu chứng, không dựa vào HbA1c. "
     "Ưu tiên thuốc ít hạ glucose, đơn giản hóa phác đồ (de-intensification) khi hạ glucose hoặc mục tiêu quá chặt.",
     "người cao tuổi; giảm cường độ điều trị; deintensification; hạ glucose người già"),
    ("Quản lý chung", "Đái tháo đường và tháng Ramadan hay nhịn ăn: tư vấn thế nào?",
     "Phân tầng nguy cơ trước khi nhịn ăn; bệnh nhân típ 1, hạ glucose tái diễn, DKA gần đây, thai kỳ, suy thận nặng thường được khuyên không nhịn. "
     "Nếu nhịn: chuyển liều thuốc chính sang bữa tối, giảm liều sulfonylurea và insulin nền, tạm ngưng SGLT2i nếu nguy cơ mất nước; "
     "hướng dẫn tự đo glucose và phá nhịn khi glucose < 3,9 hoặc > 16,7 mmol/L.",
     "nhịn ăn; Ramadan; nhịn ăn gián đoạn; chỉnh thuốc khi nhịn ăn"),
    ("Quản lý chung", "Giáo dục tự quản lý đái tháo đường cần nội dung gì?",
     "Giáo dục và hỗ trợ tự quản lý (DSMES) khi chẩn đoán, hằng năm, khi có biến chứng mới và khi chuyển tiếp chăm sóc: "
     "dinh dưỡng, vận động, dùng thuốc và kỹ thuật tiêm, tự theo dõi glucose, phòng và xử trí hạ glucose, ngày ốm, chăm sóc bàn chân, cai thuốc lá, sức khỏe tâm thần. "
     "Tầm soát trầm cảm và căng thẳng do bệnh (diabetes distress) định kỳ.",
     "giáo dục tự quản lý; DSMES; diabetes distress; tư vấn bệnh nhân"),
    ("Quản lý chung", "Vaccine khuyến cáo cho người đái tháo đường?",
     "Cúm hằng năm; phế cầu theo lịch hiện hành; viêm gan B cho người lớn chưa tiêm (đặc biệt < 60 tuổi); zona cho người ≥ 50 tuổi; COVID-19 và Tdap theo khuyến cáo. "
     "Kiểm tra và cập nhật tình trạng tiêm chủng định kỳ tại các lần khám.",
     "vaccine; tiêm chủng; cúm; phế cầu; viêm gan B; zona"),
    ("Quản lý chung", "Điều trị béo phì ở người đái tháo đường típ 2?",
     "Giảm ≥ 5% cân nặng cải thiện glucose, huyết áp, lipid; giảm 10–15% có thể đưa đến lui bệnh ở một số bệnh nhân. "
     "Can thiệp lối sống cường độ cao, ưu tiên thuốc hạ glucose giúp giảm cân (GLP-1 RA, GIP/GLP-1 RA, SGLT2i) và tránh thuốc tăng cân khi có thể. "
     "Phẫu thuật chuyển hóa (ADA 2025): cân nhắc ở người đái tháo đường típ 2 có BMI ≥ 30 kg/m² (≥ 27,5 kg/m² ở người châu Á) "
     "đủ điều kiện phẫu thuật, như một lựa chọn kiểm soát cân nặng và glucose.",
     "béo phì; giảm cân; phẫu thuật chuyển hóa; tirzepatide; lui bệnh đái tháo đường"),
    # --- Tuyến giáp
    ("Tuyến giáp", "Liều levothyroxine trong suy giáp và cách theo dõi?",
     "Người trẻ không bệnh tim: liều thay thế đầy đủ khoảng 1,6 µg/kg/ngày; người cao tuổi hoặc bệnh mạch vành: khởi đầu 12,5–25 µg/ngày và tăng chậm. "
     "Uống lúc đói, 30–60 phút trước ăn sáng (hoặc trước ngủ, cách bữa tối ≥ 3 giờ), cách sắt, canxi, thuốc kháng acid khoảng 4 giờ. "
     "Kiểm tra TSH sau 6–8 tuần mỗi lần đổi liều, khi ổn định thì 6–12 tháng một lần.",
     "levothyroxine; suy giáp; liều hormone giáp; TSH theo dõi; Levothyrox"),
    ("Tuyến giáp", "Suy giáp dưới lâm sàng: khi nào điều trị?",
     "TSH ≥ 10 mIU/L: thường điều trị. TSH giữa giới hạn trên và 10 mIU/L: cá thể hóa theo triệu chứng, tuổi, kháng thể anti-TPO, bệnh tim mạch, mong muốn có thai; "
     "nhiều người cao tuổi chỉ cần theo dõi. Xác nhận bằng xét nghiệm lặp lại sau 2–3 tháng vì TSH dao động và có thể tự trở về bình thường. "
     "Phụ nữ mang thai hoặc chuẩn bị có thai có ngưỡng điều trị khác, cần theo hướng dẫn riêng.",
     "suy giáp dưới lâm sàng; TSH cao nhẹ; anti-TPO; điều trị suy giáp"),
    ("Tuyến giáp", "Điều trị cường giáp do Basedow bằng thuốc kháng giáp?",
     "Methimazole (thiamazole) là lựa chọn ưu tiên; propylthiouracil dùng trong 3 tháng đầu thai kỳ hoặc cơn bão giáp. "
     "Cảnh báo bệnh nhân ngưng thuốc và xét nghiệm công thức máu ngay khi sốt, đau họng (mất bạch cầu hạt); theo dõi men gan. "
     "Chẹn beta kiểm soát triệu chứng. Điều trị thường 12–18 tháng, cân nhắc iod phóng xạ hoặc phẫu thuật khi tái phát hoặc không dung nạp.",
     "Basedow; Graves; cường giáp; methimazole; thiamazole; PTU; mất bạch cầu hạt"),
    ("Tuyến giáp", "Tiếp cận nhân giáp phát hiện trên siêu âm?",
     "Định lượng TSH trước: TSH thấp thì xạ hình để xác định nhân nóng (hiếm khi ác tính). "
     "Phân tầng nguy cơ trên siêu âm (ví dụ ACR TI-RADS hoặc ATA) quyết định chọc hút tế bào kim nhỏ (FNA) theo kích thước ngưỡng; kết quả phân loại theo Bethesda. "
     "Nhân lành tính hoặc dưới ngưỡng FNA: theo dõi siêu âm định kỳ theo mức nguy cơ.",
     "nhân giáp; bướu giáp nhân; TI-RADS; FNA; Bethesda; siêu âm tuyến giáp"),
    ("Tuyến giáp", "Chức năng tuyến giáp khi mang thai cần lưu ý gì?",
     "Nhu cầu levothyroxine tăng khi có thai: phụ nữ đang điều trị suy giáp thường tăng liều khoảng 20–30% ngay khi có thai (ví dụ thêm 2 viên mỗi tuần) và kiểm tra TSH mỗi 4 tuần nửa đầu thai kỳ. "
     "Dùng khoảng tham chiếu TSH theo thai kỳ của phòng xét nghiệm. "
     "Cường giáp: phân biệt Basedow với nhiễm độc giáp thai kỳ thoáng qua do hCG; PTU ưu tiên 3 tháng đầu.",
     "tuyến giáp thai kỳ; suy giáp mang thai; TSH thai kỳ; cường giáp thai kỳ"),
    # --- Khác
    ("Nội tiết khác", "Xử trí tăng glucose do corticoid?",
     "Prednisolone liều một lần buổi sáng chủ yếu làm tăng glucose buổi chiều – tối, glucose đói có thể bình thường nên cần đo glucose sau trưa và trước ăn tối. "
     "Khi cần điều trị, insulin NPH tiêm buổi sáng cùng lúc với corticoid là lựa chọn phù hợp, liều tính theo cân nặng và liều corticoid, chỉnh hằng ngày. "
     "Giảm liều insulin tương ứng khi giảm liều corticoid để tránh hạ glucose.",
     "tăng đường huyết do corticoid; prednisolone; steroid; NPH buổi sáng"),
    ("Nội tiết khác", "Khi nào nghi ngờ suy thượng thận và xét nghiệm gì?",
     "Gợi ý: mệt mỏi, sụt cân, chán ăn, hạ huyết áp tư thế, hạ natri, tăng kali (suy thượng thận nguyên phát), sạm da; đặc biệt ở bệnh nhân vừa ngưng corticoid kéo dài. "
     "Định lượng cortisol máu 8 giờ sáng kèm ACTH; kết quả không kết luận được thì làm nghiệm pháp kích thích ACTH (Synacthen). "
     "Nghi suy thượng thận cấp (sốc, nôn, đau bụng) phải tiêm hydrocortisone ngay, không chờ kết quả xét nghiệm.",
     "suy thượng thận; cortisol sáng; Synacthen; Addison; ngưng corticoid; hydrocortisone"),
]
URGENT_CODES: frozenset[str] = frozenset()
