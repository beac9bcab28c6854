"""Sample KB, role ``doctor_dental``: concise professional notes for dentists (written for this project).

Clinical summaries for orientation only; the clinic's own protocols and current guidelines prevail.
"""

from __future__ import annotations

ENTRIES: list[tuple[str, str, str, str]] = [
    # --- Răng khôn & tiểu phẫu
    ("Răng khôn & tiểu phẫu", "Chỉ định nhổ răng khôn hàm dưới mọc lệch?",
     "Chỉ định khi có triệu chứng hoặc bệnh lý liên quan: viêm quanh thân răng tái phát, sâu răng 8 hoặc mặt xa răng 7 không phục hồi được, tiêu chân răng 7, tiêu xương nha chu mặt xa răng 7, nang hoặc u liên quan, "
     "hoặc răng cản trở điều trị chỉnh nha, phục hình. "
     "Răng ngầm không triệu chứng, không bệnh lý có thể theo dõi lâm sàng và X-quang định kỳ, cân nhắc tuổi và nguy cơ phẫu thuật.",
     "chỉ định nhổ răng khôn; răng 38 48 mọc lệch; nhổ dự phòng răng khôn"),
    ("Răng khôn & tiểu phẫu", "Đánh giá nguy cơ tổn thương thần kinh huyệt răng dưới trước nhổ răng khôn?",
     "Trên phim toàn cảnh, các dấu hiệu gợi ý chân răng sát ống thần kinh: chân răng sáng thấu quang, gián đoạn đường cản quang bờ ống, ống bị đổi hướng hoặc hẹp, chân răng bị lệch hướng. "
     "Khi có dấu hiệu, cân nhắc CBCT để đánh giá liên quan ba chiều và lựa chọn kỹ thuật (ví dụ cắt thân răng để lại chân — coronectomy — ở ca phù hợp). "
     "Cần tư vấn và ghi nhận đồng thuận về nguy cơ tê môi cằm.",
     "thần kinh răng dưới; IAN; ống răng dưới; CBCT răng khôn; coronectomy; tê môi sau nhổ răng"),
    ("Răng khôn & tiểu phẫu", "Xử trí viêm quanh thân răng khôn cấp?",
     "Làm sạch, bơm rửa dưới lợi trùm bằng nước muối hoặc chlorhexidine, loại bỏ sang chấn từ răng đối diện nếu có, giảm đau. "
     "Kháng sinh chỉ khi có dấu hiệu lan tỏa hoặc toàn thân (sốt, hạch, sưng lan, khít hàm). "
     "Sau giai đoạn cấp, đánh giá chỉ định nhổ răng khôn; chuyển tuyến ngay khi có dấu hiệu nhiễm trùng khoang sâu.",
     "viêm quanh thân răng; viêm lợi trùm; pericoronitis; sưng răng khôn cấp"),
    ("Răng khôn & tiểu phẫu", "Chẩn đoán và điều trị viêm ổ răng khô (alveolar osteitis)?",
     "Đau tăng ngày 2–4 sau nhổ, lan tai thái dương, ổ răng trống mất cục máu đông, lộ xương, hôi miệng; thường không sốt, không sưng nhiều. "
     "Điều trị: bơm rửa nhẹ ổ răng bằng nước muối ấm, đặt băng thuốc giảm đau tại chỗ, giảm đau toàn thân, tái khám 2–3 ngày. "
     "Kháng sinh toàn thân không cần thiết thường quy; nạo mạnh ổ răng không được khuyến cáo.",
     "viêm ổ răng khô; dry socket; alveolar osteitis; đau sau nhổ răng"),
    ("Răng khôn & tiểu phẫu", "Dấu hiệu nhiễm trùng do răng cần chuyển viện cấp cứu?",
     "Khít hàm tiến triển, nuốt khó hoặc nuốt đau, giọng nói thay đổi, sưng sàn miệng hoặc dưới hàm hai bên (nghi viêm tấy Ludwig), sưng lan quanh hốc mắt, "
     "khó thở hoặc tư thế ngồi cúi để thở, sốt cao, dấu hiệu nhiễm trùng toàn thân. "
     "Đây là nguy cơ đe dọa đường thở; cần chuyển ngay đến cơ sở có phẫu thuật hàm mặt, không trì hoãn để dùng thử kháng sinh đường uống.",
     "nhiễm trùng khoang sâu; viêm tấy Ludwig; khít hàm; nhiễm trùng vùng cổ; chuyển viện"),
    ("Răng khôn & tiểu phẫu", "Dùng kháng sinh trong nhiễm trùng răng miệng thế nào cho hợp lý?",
     "Xử trí nguyên nhân (dẫn lưu, mở tủy, nhổ răng) là chính; kháng sinh chỉ bổ trợ khi có sưng lan tỏa, dấu hiệu toàn thân hoặc bệnh nhân suy giảm miễn dịch. "
     "Lựa chọn đầu tay thường là amoxicillin hoặc penicillin V; dị ứng penicillin cân nhắc nhóm thay thế theo phác đồ. "
     "Viêm tủy không hồi phục, áp xe khu trú đã dẫn lưu không cần kháng sinh thường quy; dùng ngắn ngày và đánh giá lại sau 2–3 ngày.",
     "kháng sinh nha khoa; amoxicillin; nhiễm trùng răng; kê kháng sinh hợp lý"),
    # --- Bệnh nhân có bệnh toàn thân
    ("Bệnh nhân có bệnh toàn thân", "Kháng sinh dự phòng viêm nội tâm mạc trước thủ thuật nha khoa?",
     "Theo khuyến cáo AHA hiện hành, chỉ dự phòng cho bệnh nhân nguy cơ cao (van tim nhân tạo hoặc vật liệu sửa van, tiền sử viêm nội tâm mạc, một số bệnh tim bẩm sinh, ghép tim có bệnh van) "
     "khi làm thủ thuật tác động đến mô nướu, vùng quanh chóp hoặc làm thủng niêm mạc. "
     "Phác đồ người lớn thường dùng: amoxicillin 2 g uống 30–60 phút trước thủ thuật; dị ứng penicillin dùng azithromycin hoặc clarithromycin 500 mg, hoặc doxycycline 100 mg. "
     "Phối hợp bác sĩ tim mạch khi chưa rõ phân tầng nguy cơ.",
     "dự phòng viêm nội tâm mạc; kháng sinh dự phòng; van tim nhân tạo; AHA"),
    ("Bệnh nhân có bệnh toàn thân", "Nhổ răng ở bệnh nhân đang dùng thuốc kháng đông?",
     "Với nhổ răng đơn giản, đa số bệnh nhân không cần ngưng thuốc kháng đông; ngưng thuốc làm tăng nguy cơ huyết khối. "
     "Bệnh nhân dùng warfarin: kiểm tra INR trong vòng 24 giờ (thường chấp nhận INR ≤ 3,5 cho tiểu phẫu có cầm máu tại chỗ). "
     "Với thuốc kháng đông đường uống trực tiếp, có thể sắp xếp thủ thuật xa liều hoặc hoãn liều buổi sáng theo phác đồ, phối hợp bác sĩ điều trị. "
     "Cầm máu tại chỗ: khâu, vật liệu cầm máu, tranexamic acid súc miệng; hạn chế số răng nhổ mỗi lần.",
     "kháng đông nhổ răng; warfarin INR; DOAC; rivaroxaban; apixaban; cầm máu"),
    ("Bệnh nhân có bệnh toàn thân", "Bệnh nhân đái tháo đường: lưu ý gì khi điều trị nha khoa?",
     "Hỏi HbA1c gần nhất, thuốc đang dùng và tiền sử hạ đường huyết; hẹn buổi sáng sau khi bệnh nhân đã ăn và dùng thuốc như thường lệ. "
     "Chuẩn bị đường uống nhanh để xử trí hạ đường huyết. "
     "Đường huyết kiểm soát kém làm lành thương chậm, tăng nguy cơ nhiễm trùng; cân nhắc hoãn phẫu thuật chọn lọc và phối hợp bác sĩ nội tiết. "
     "Viêm nha chu và đái tháo đường ảnh hưởng hai chiều; điều trị nha chu có thể góp phần cải thiện HbA1c.",
     "bệnh nhân tiểu đường; đái tháo đường nha khoa; HbA1c phẫu thuật; nha chu và tiểu đường"),
    ("Bệnh nhân có bệnh toàn thân", "Nguy cơ hoại tử xương hàm do thuốc (MRONJ) và cách phòng ngừa?",
     "Nguy cơ MRONJ tăng ở bệnh nhân dùng thuốc chống hủy xương (bisphosphonate, denosumab) hoặc thuốc chống tạo mạch, cao nhất khi dùng liều ung thư đường tĩnh mạch. "
     "Trước khi bắt đầu thuốc, nên điều trị dứt điểm các ổ nhiễm trùng và răng không giữ được. "
     "Khi đang dùng thuốc, ưu tiên điều trị bảo tồn, thủ thuật xâm lấn tối thiểu và theo dõi lành thương; phối hợp bác sĩ kê đơn, không tự ý ngưng thuốc.",
     "MRONJ; hoại tử xương hàm; bisphosphonate; denosumab; loãng xương nhổ răng"),
    ("Bệnh nhân có bệnh toàn thân", "Liều tối đa thuốc tê tại chỗ trong nha khoa?",
     "Liều tối đa tính theo cân nặng và tổng liều: lidocaine có epinephrine khoảng 7 mg/kg (không quá 500 mg), articaine có epinephrine khoảng 7 mg/kg, mepivacaine khoảng 6,6 mg/kg. "
     "Một ống 1,8 mL lidocaine 2% chứa 36 mg. "
     "Trẻ em (AAPD): lidocaine và mepivacaine tối đa 4,4 mg/kg, không quá 300 mg tổng liều; không dùng articaine cho trẻ dưới 4 tuổi; "
     "tính liều theo cân nặng thực trước khi tiêm, nhất là trẻ nhẹ cân. "
     "Giảm liều ở người cao tuổi, bệnh gan; ở bệnh nhân tim mạch hạn chế tổng lượng epinephrine và luôn hút ngược trước khi bơm. "
     "Đối chiếu tờ thông tin sản phẩm đang dùng.",
     "liều thuốc tê; lidocaine tối đa; articaine; mepivacaine; epinephrine bệnh tim"),
    ("Bệnh nhân có bệnh toàn thân", "Điều trị nha khoa cho phụ nữ mang thai?",
     "Điều trị cấp cứu (giảm đau, kiểm soát nhiễm trùng) có thể làm bất kỳ lúc nào; điều trị chọn lọc thuận lợi nhất vào 3 tháng giữa. "
     "Lidocaine có epinephrine dùng được ở liều thông thường; chụp phim khi cần với liều thấp và che chắn. "
     "Paracetamol là lựa chọn giảm đau ưu tiên; tránh NSAID, nhất là 3 tháng cuối; tránh tetracycline. "
     "Tư thế nghiêng trái ở 3 tháng cuối để tránh hạ huyết áp do chèn ép tĩnh mạch chủ.",
     "phụ nữ mang thai; thai kỳ nha khoa; bà bầu chữa răng; thuốc tê khi mang thai"),
    ("Bệnh nhân có bệnh toàn thân", "Bệnh nhân tăng huyết áp: khi nào hoãn điều trị nha khoa?",
     "Đo huyết áp trước thủ thuật. Với huyết áp rất cao (thường ≥ 180/110 mmHg), hoãn điều trị chọn lọc và chuyển khám nội khoa; "
     "nếu kèm triệu chứng như đau ngực, khó thở, đau đầu dữ dội, rối loạn thần kinh thì xử trí cấp cứu. "
     "Ở bệnh nhân kiểm soát được, giảm lo âu, gây tê hiệu quả và hạn chế tổng lượng epinephrine.",
     "tăng huyết áp; cao huyết áp nhổ răng; hoãn thủ thuật; huyết áp trước nhổ răng"),
    # --- Nội nha
    ("Nội nha", "Phân biệt viêm tủy có hồi phục và không hồi phục?",
     "Viêm tủy có hồi phục: đau ngắn, do kích thích (lạnh, ngọt), hết ngay khi bỏ kích thích, không đau tự phát. "
     "Viêm tủy không hồi phục: đau tự phát, kéo dài sau kích thích, đau về đêm, có thể lan; thử lạnh đau kéo dài. "
     "Kết hợp gõ, thử nhiệt, thử điện và X-quang để đánh giá vùng quanh chóp; chẩn đoán quyết định hướng điều trị (bảo tồn tủy, lấy tủy buồng hay điều trị tủy toàn bộ).",
     "viêm tủy; viêm tủy hồi phục; viêm tủy không hồi phục; chẩn đoán tủy; pulpitis"),
    ("Nội nha", "Chỉ định lấy tủy buồng (pulpotomy) ở răng vĩnh viễn?",
     "Ở răng vĩnh viễn chưa đóng chóp có tổn thương tủy khu trú, lấy tủy buồng giúp bảo tồn tủy chân để chân răng tiếp tục phát triển. "
     "Ở răng trưởng thành, lấy tủy buồng toàn phần với vật liệu canxi silicat (MTA, biodentine) là một lựa chọn được chấp nhận ngày càng nhiều khi cầm máu được trong vài phút, cần chọn ca và theo dõi lâm sàng, X-quang. "
     "Kiểm soát nhiễm khuẩn bằng đê cao su là bắt buộc.",
     "lấy tủy buồng; pulpotomy; MTA; biodentine; bảo tồn tủy; che tủy"),
    ("Nội nha", "Đau sau điều trị tủy: xử trí thế nào?",
     "Đau nhẹ đến vừa vài ngày sau sửa soạn ống tủy là thường gặp, xử trí bằng giảm đau (NSAID nếu không chống chỉ định, có thể phối hợp paracetamol) và chỉnh khớp cắn nếu cộm. "
     "Sưng hoặc đau tăng (flare-up) cần đánh giá lại: dẫn lưu, làm sạch lại ống tủy, kháng sinh khi có lan tỏa hoặc dấu hiệu toàn thân. "
     "Kiểm tra X-quang về chiều dài làm việc và vật liệu trám bít.",
     "đau sau chữa tủy; flare-up; đau sau điều trị nội nha"),
    ("Nội nha", "Có cần bọc mão sau điều trị tủy răng sau không?",
     "Răng hàm, răng cối nhỏ sau điều trị tủy có nguy cơ gãy cao, nên phục hồi có che múi (mão hoặc onlay) được khuyến nghị để tăng tỷ lệ tồn tại. "
     "Răng trước còn nhiều mô lành có thể chỉ cần trám composite. "
     "Phục hồi nên được thực hiện sớm để tránh rò rỉ vi khuẩn vào hệ thống ống tủy.",
     "bọc mão sau lấy tủy; onlay; phục hồi sau nội nha; răng chết tủy bị gãy"),
    # --- Nha chu
    ("Nha chu", "Phân loại viêm nha chu theo giai đoạn và mức độ (2017)?",
     "Phân loại 2017 (AAP/EFP) đánh giá giai đoạn I–IV theo mức độ nặng (mất bám dính lâm sàng, tiêu xương, mất răng do nha chu) và độ phức tạp điều trị, "
     "và mức độ A–C theo tốc độ tiến triển (bằng chứng trực tiếp hoặc tỷ lệ % tiêu xương/tuổi) có điều chỉnh theo hút thuốc và đái tháo đường. "
     "Mô tả thêm mức độ lan rộng: khu trú (< 30% răng), toàn thể hoặc kiểu răng cửa–răng hàm.",
     "phân loại nha chu 2017; giai đoạn nha chu; staging grading; AAP EFP"),
    ("Nha chu", "Điều trị nha chu không phẫu thuật gồm những bước nào?",
     "Bước 1: hướng dẫn vệ sinh, kiểm soát yếu tố nguy cơ (bỏ thuốc lá, kiểm soát đường huyết), lấy cao trên nướu. "
     "Bước 2: cạo cao, xử lý mặt chân răng dưới nướu; kháng sinh toàn thân chỉ cân nhắc ở các ca chọn lọc. "
     "Đánh giá lại sau khoảng 6–8 tuần; túi còn sâu có chảy máu khi thăm dò thì cân nhắc điều trị lại hoặc phẫu thuật. "
     "Duy trì nha chu định kỳ 3–6 tháng tùy nguy cơ.",
     "điều trị nha chu; cạo cao xử lý mặt gốc răng; SRP; duy trì nha chu"),
    ("Nha chu", "Ảnh hưởng của hút thuốc lá đến điều trị nha chu và implant?",
     "Hút thuốc làm tăng nguy cơ và tốc độ tiến triển viêm nha chu, che lấp dấu hiệu chảy máu khi thăm dò, giảm đáp ứng điều trị và tăng tỷ lệ thất bại implant, viêm quanh implant. "
     "Tư vấn cai thuốc ngắn gọn ở mỗi lần khám là can thiệp có hiệu quả và nên ghi nhận trong hồ sơ.",
     "hút thuốc nha chu; thuốc lá implant; cai thuốc lá nha khoa"),
    ("Nha chu", "Chẩn đoán và xử trí viêm quanh implant?",
     "Viêm quanh implant: chảy máu và/hoặc chảy mủ khi thăm dò, độ sâu túi tăng so với trước, kèm tiêu xương quanh implant trên X-quang vượt quá mức tái cấu trúc ban đầu. "
     "Viêm niêm mạc quanh implant (chưa tiêu xương) có thể hồi phục với làm sạch cơ học và cải thiện vệ sinh. "
     "Viêm quanh implant cần làm sạch bề mặt, có thể phẫu thuật; đánh giá khớp cắn, phục hình thừa xi măng và yếu tố nguy cơ.",
     "viêm quanh implant; peri-implantitis; tiêu xương implant; viêm niêm mạc quanh implant"),
    # --- Răng nhạy cảm
    ("Răng nhạy cảm", "Chẩn đoán và điều trị quá cảm ngà?",
     "Quá cảm ngà là chẩn đoán loại trừ: cần loại trừ sâu răng, nứt răng, miếng trám hở, viêm tủy. "
     "Điều trị theo bậc: điều chỉnh thói quen chải răng và chế độ ăn acid; kem đánh răng chứa kali nitrat, stannous fluoride hoặc arginine; "
     "tại phòng khám bôi vecni fluor, chất dán hoặc chất bịt ống ngà; trường hợp tụt nướu rõ có thể trám cổ răng hoặc ghép mô mềm.",
     "quá cảm ngà; ê buốt ngà; dentin hypersensitivity; kali nitrat; vecni fluor"),
    ("Răng nhạy cảm", "Hội chứng răng nứt: chẩn đoán thế nào?",
     "Bệnh nhân đau nhói khi cắn, nhất là khi nhả cắn, nhạy cảm lạnh, khó xác định răng. "
     "Thử cắn từng múi bằng dụng cụ chuyên dụng, nhuộm màu, soi đèn chiếu xuyên và kính phóng đại giúp xác định đường nứt; X-quang thường không thấy. "
     "Xử trí sớm bằng phục hồi che múi giúp hạn chế nứt lan; nứt lan đến chân răng có tiên lượng kém.",
     "răng nứt; cracked tooth; đau khi cắn; nứt răng"),
    # --- Sâu răng & phòng ngừa
    ("Sâu răng & phòng ngừa", "Sử dụng bạc diamine fluoride (SDF) trong kiểm soát sâu răng?",
     "SDF 38% giúp ngừng tiến triển sâu ngà ở răng sữa và sâu chân răng người cao tuổi, đặc biệt khi khó thực hiện điều trị phục hồi. "
     "Nhược điểm chính là nhuộm đen vùng tổn thương, cần giải thích và ghi đồng thuận trước. "
     "Chống chỉ định khi dị ứng bạc, loét niêm mạc vùng bôi; thường bôi nhắc lại định kỳ theo phác đồ.",
     "SDF; silver diamine fluoride; bạc diamine fluoride; ngừng sâu răng"),
    ("Sâu răng & phòng ngừa", "Chỉ định vecni fluor và lượng kem đánh răng fluor cho trẻ em?",
     "Vecni fluor 5% natri fluoride bôi định kỳ 3–6 tháng một lần cho trẻ có nguy cơ sâu răng trung bình – cao. "
     "Kem đánh răng fluor (khoảng 1000 ppm trở lên): trẻ dưới 3 tuổi lượng bằng hạt gạo, 3–6 tuổi lượng bằng hạt đậu, chải hai lần mỗi ngày có người lớn giám sát. "
     "Đánh giá nguy cơ sâu răng cá nhân để quyết định tần suất tái khám.",
     "vecni fluor; fluor trẻ em; kem đánh răng có fluor; phòng sâu răng"),
    ("Sâu răng & phòng ngừa", "Quản lý sâu răng theo hướng xâm lấn tối thiểu?",
     "Phát hiện sớm (ví dụ theo ICDAS), đánh giá nguy cơ và hoạt tính tổn thương; tổn thương men chưa tạo lỗ ưu tiên tái khoáng và kiểm soát mảng bám. "
     "Khi cần phục hồi, lấy mô sâu chọn lọc, tránh lộ tủy ở sang thương sâu, bảo tồn tối đa mô lành; chọn vật liệu dán. "
     "Theo dõi định kỳ và điều chỉnh yếu tố nguy cơ quan trọng hơn khoan trám sớm.",
     "xâm lấn tối thiểu; ICDAS; lấy mô sâu chọn lọc; tái khoáng"),
    ("Sâu răng & phòng ngừa", "Chỉ định trám bít hố rãnh?",
     "Chỉ định cho hố rãnh sâu ở răng hàm vĩnh viễn mới mọc của trẻ có nguy cơ sâu răng, và có thể cho tổn thương men sớm chưa tạo lỗ ở hố rãnh. "
     "Vật liệu nhựa (resin) có độ lưu giữ tốt khi cách ly tốt; glass ionomer là lựa chọn khi khó cách ly. "
     "Kiểm tra độ lưu giữ ở mỗi lần tái khám và bổ sung khi bong.",
     "trám bít hố rãnh; sealant; phòng sâu răng hàm"),
    # --- Nha khoa trẻ em
    ("Nha khoa trẻ em", "Xử trí răng vĩnh viễn bị bật khỏi ổ răng (avulsion)?",
     "Cắm lại càng sớm càng tốt, lý tưởng trong vòng 60 phút ngoài ổ; nếu chưa cắm lại được, bảo quản trong sữa, dung dịch HBSS, nước muối sinh lý hoặc nước bọt (không bảo quản khô, không dùng nước máy). "
     "Rửa nhẹ bề mặt chân răng, không cạo dây chằng; cố định mềm khoảng 2 tuần; kiểm tra tình trạng tiêm phòng uốn ván. "
     "Răng chưa đóng chóp có thể tái tạo mạch; răng đã đóng chóp thường cần điều trị tủy trong 7–10 ngày. Không cắm lại răng sữa.",
     "răng bật khỏi ổ; avulsion; chấn thương răng; cắm lại răng; sang chấn răng"),
    ("Nha khoa trẻ em", "Chỉ định điều trị tủy răng sữa?",
     "Lấy tủy buồng răng sữa khi tủy bị lộ do sâu, viêm giới hạn ở buồng tủy, chân răng còn đủ dài và không có dấu hiệu bệnh lý quanh chóp. "
     "Khi có viêm tủy lan, áp xe hoặc tổn thương vùng chẽ, cân nhắc lấy tủy toàn bộ bằng vật liệu tiêu được, hoặc nhổ và giữ khoảng. "
     "Phục hồi sau điều trị bằng mão kim loại làm sẵn giúp tăng tỷ lệ thành công ở răng hàm sữa.",
     "tủy răng sữa; pulpotomy răng sữa; mão kim loại; giữ khoảng"),
    ("Nha khoa trẻ em", "Thời điểm khám chỉnh nha đầu tiên cho trẻ?",
     "Nên khám đánh giá chỉnh nha khoảng 7 tuổi, khi răng cối lớn thứ nhất và răng cửa vĩnh viễn đã mọc, để phát hiện cắn chéo, cắn ngược, thói quen xấu và bất hài hòa xương. "
     "Điều trị sớm (giai đoạn 1) chỉ cho các chỉ định chọn lọc; phần lớn ca điều trị toàn diện ở giai đoạn răng vĩnh viễn sớm.",
     "chỉnh nha sớm; khám chỉnh nha 7 tuổi; cắn chéo; cắn ngược"),
    # --- Phục hình & implant
    ("Phục hình & implant", "Chống chỉ định và yếu tố nguy cơ khi cấy ghép implant?",
     "Chống chỉ định tương đối hoặc yếu tố nguy cơ: đái tháo đường kiểm soát kém, hút thuốc nhiều, xạ trị vùng hàm, thuốc chống hủy xương liều ung thư, viêm nha chu chưa kiểm soát, nghiến răng nặng, bệnh nhân chưa hết tăng trưởng. "
     "Đánh giá thể tích xương bằng CBCT và lập kế hoạch theo phục hình. "
     "Ghi nhận và giải thích nguy cơ, tối ưu các yếu tố điều chỉnh được trước phẫu thuật.",
     "chống chỉ định implant; cấy ghép nha khoa; đánh giá trước implant; CBCT implant"),
    ("Phục hình & implant", "Khi nào nên mài răng làm mão sứ thay vì phục hồi bảo tồn hơn?",
     "Mão toàn phần chỉ định khi mô răng còn lại ít, răng đã điều trị tủy ở vùng chịu lực, thay phục hình cũ thất bại hoặc làm trụ cầu. "
     "Với yêu cầu thẩm mỹ trên răng còn nguyên vẹn, ưu tiên các phương án bảo tồn (tẩy trắng, trám composite, mặt dán sứ sửa soạn tối thiểu). "
     "Mài nhiều trên răng sống làm tăng nguy cơ viêm tủy và hoại tử tủy về sau.",
     "mão sứ; mài răng; bọc sứ thẩm mỹ; mặt dán sứ; veneer"),
    ("Phục hình & implant", "Xử trí loét do hàm giả tháo lắp?",
     "Tìm và chỉnh vùng cấn (dùng chất chỉ thị áp lực), mài chỉnh bờ hàm, hướng dẫn tháo hàm khi ngủ và vệ sinh hàm. "
     "Đánh giá lại sau 1–2 tuần: vết loét không lành sau khi đã loại bỏ nguyên nhân cần sinh thiết để loại trừ tổn thương ác tính. "
     "Nấm miệng dưới hàm giả cần điều trị kháng nấm kèm vệ sinh hàm.",
     "loét do hàm giả; hàm giả cấn; nấm dưới hàm giả; viêm miệng do hàm giả"),
    # --- Niêm mạc miệng
    ("Niêm mạc miệng", "Tổn thương niêm mạc miệng nào cần sinh thiết?",
     "Vết loét hoặc tổn thương không lành sau khoảng 2 tuần khi đã loại bỏ yếu tố kích thích, mảng trắng hoặc đỏ không cạo được, tổn thương cứng, dính, chảy máu, "
     "kèm hạch cổ, tê bì hoặc ở bệnh nhân hút thuốc, uống rượu, nhai trầu. "
     "Chuyển chuyên khoa hoặc sinh thiết kịp thời; ghi chép, chụp ảnh tổn thương để theo dõi.",
     "sinh thiết niêm mạc miệng; bạch sản; hồng sản; ung thư miệng; loét không lành"),
    ("Niêm mạc miệng", "Điều trị loét áp-tơ tái phát?",
     "Điều trị triệu chứng: corticoid bôi tại chỗ, nước súc miệng kháng viêm hoặc giảm đau, tránh thức ăn kích thích và kem đánh răng chứa SLS ở người nhạy cảm. "
     "Loét lớn, kéo dài, tái phát dày hoặc kèm triệu chứng toàn thân cần tầm soát thiếu sắt, B12, folate, bệnh Celiac, Behçet, suy giảm miễn dịch.",
     "loét áp tơ; nhiệt miệng tái phát; aphthous; corticoid bôi"),
    ("Niêm mạc miệng", "Chẩn đoán nấm miệng (candida) ở người lớn?",
     "Thể giả mạc: mảng trắng cạo được để lại nền đỏ; thể teo đỏ thường dưới hàm giả; viêm khóe miệng. "
     "Tìm yếu tố thuận lợi: đái tháo đường, corticoid hít, kháng sinh, khô miệng, suy giảm miễn dịch, hàm giả. "
     "Điều trị kháng nấm tại chỗ (ví dụ nystatin, miconazole — lưu ý tương tác của miconazole với warfarin) hoặc toàn thân ở ca lan rộng, kèm xử lý yếu tố thuận lợi.",
     "nấm miệng; candida; tưa miệng người lớn; mảng trắng trong miệng"),
    # --- Khớp thái dương hàm & khác
    ("Khớp thái dương hàm & khác", "Xử trí ban đầu rối loạn khớp thái dương hàm?",
     "Phần lớn rối loạn thái dương hàm cải thiện với điều trị bảo tồn: giải thích, ăn mềm, hạn chế há quá rộng, chườm ấm, bài tập hàm, NSAID ngắn ngày, quản lý căng thẳng. "
     "Máng nhai ổn định có thể hỗ trợ ở bệnh nhân nghiến răng. "
     "Tránh các điều trị không hồi phục (mài chỉnh khớp cắn rộng) trong giai đoạn đầu; chuyển chuyên khoa khi có khóa hàm kéo dài hoặc nghi bệnh lý khớp.",
     "khớp thái dương hàm; TMD; đau khớp hàm; kêu khớp hàm; há miệng hạn chế"),
    ("Khớp thái dương hàm & khác", "Chỉ định chụp CBCT trong nha khoa?",
     "CBCT chỉ định khi phim 2D không đủ thông tin cho quyết định điều trị: lập kế hoạch implant, đánh giá răng ngầm gần cấu trúc giải phẫu, nội nha phức tạp, chấn thương, bệnh lý xương hàm. "
     "Chọn trường chụp nhỏ nhất đủ dùng theo nguyên tắc ALARA; không chụp thường quy để tầm soát.",
     "CBCT; chụp cắt lớp chùm tia hình nón; chỉ định X-quang; ALARA"),
    ("Khớp thái dương hàm & khác", "Xử trí ngất và hạ đường huyết tại ghế nha?",
     "Ngất do phản xạ phế vị: dừng thủ thuật, đặt bệnh nhân nằm ngửa kê cao chân, nới lỏng quần áo, theo dõi mạch, huyết áp, hô hấp; thường hồi phục nhanh. "
     "Nghi hạ đường huyết ở bệnh nhân đái tháo đường: nếu tỉnh cho uống 15–20 g đường nhanh, đo lại; nếu không tỉnh gọi cấp cứu, dùng glucagon hoặc glucose tĩnh mạch theo khả năng. "
     "Không hồi phục nhanh hoặc có đau ngực, khó thở: gọi 115 và bắt đầu hồi sinh tim phổi khi cần.",
     "ngất tại ghế nha; cấp cứu nha khoa; hạ đường huyết phòng khám; xử trí cấp cứu"),
    ("Khớp thái dương hàm & khác", "Kiểm soát nhiễm khuẩn trong phòng khám nha khoa: những điểm cốt lõi?",
     "Áp dụng phòng ngừa chuẩn cho mọi bệnh nhân: vệ sinh tay, phương tiện bảo hộ, tiệt khuẩn dụng cụ tái sử dụng theo quy trình có kiểm chứng (chỉ thị hóa học, sinh học), "
     "khử khuẩn bề mặt giữa các bệnh nhân, quản lý nước đường ống ghế nha, xử lý vật sắc nhọn an toàn. "
     "Tiêm phòng viêm gan B cho nhân viên và có quy trình xử lý phơi nhiễm nghề nghiệp.",
     "kiểm soát nhiễm khuẩn; vô khuẩn nha khoa; tiệt khuẩn dụng cụ; phơi nhiễm nghề nghiệp"),
]
URGENT_CODES: frozenset[str] = frozenset()
